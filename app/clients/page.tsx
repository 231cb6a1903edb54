import { redirect } from "next/navigation";
import { connection } from "next/server";
import { Suspense } from "react";
import { ClientsView } from "@/components/clients/clients-view";
import { SnapshotOpenError } from "@/components/snapshot/snapshot-open-error";
import { getServerContext } from "@/lib/server/context";
import { pageSnapshot, type Search } from "@/lib/server/page-snapshot";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";

/** The selection a snapshot downloaded from Clients opens with (another page's, such as the replay's resource, is not Clients'). */
const fromClients = (pick: (v: NonNullable<SnapshotInfo["initialView"]>) => string | number | undefined) => (s: SnapshotInfo) => {
  const value = s.initialView?.page === "/clients" ? pick(s.initialView) : undefined;
  return value === undefined ? undefined : String(value);
};
const CLIENTS_SELECTION = { cluster: fromClients((v) => v.cluster), resource: fromClients((v) => v.resource), at: fromClients((v) => v.atMs) };

/**
 * Clients reads the live store's audit requests, or those of the snapshot its link names (the replay's
 * from the replay's pages). A bare link stays live even without Prometheus: it is where an audit log is uploaded.
 */
export default async function ClientsPage({ searchParams }: { searchParams: Promise<Search> }) {
  await connection();
  const ctx = getServerContext();
  const shown = await pageSnapshot(ctx, await searchParams, "/clients", CLIENTS_SELECTION, true);
  if (shown.kind === "redirect") redirect(shown.to);
  if (shown.kind === "error") return <SnapshotOpenError replay={shown.replay} message={shown.message} offers={shown.offers} configSource={ctx.config.source} />;
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <ClientsView initialNowMs={Date.now()} snapshot={shown.kind === "snapshot" ? shown.snapshot : undefined} prometheus={ctx.config.prometheus !== null} />
    </Suspense>
  );
}
