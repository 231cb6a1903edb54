import { redirect } from "next/navigation";
import { preload } from "react-dom";
import { connection } from "next/server";
import { Suspense } from "react";
import { ClientsView } from "@/components/clients/clients-view";
import { SnapshotOpenError } from "@/components/snapshot/snapshot-open-error";
import { getServerContext } from "@/lib/server/context";
import { pageSnapshot, type Search } from "@/lib/server/page-snapshot";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";
import { linkRange } from "@/lib/snapshot/format/view-range";
import { atInside, clientsUrl } from "@/lib/panels/panel-url";
import { parseAtParam } from "@/lib/time/range";
import { searchTexts } from "@/lib/server/page-snapshot";

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
  const search = await searchParams;
  const shown = await pageSnapshot(ctx, search, "/clients", CLIENTS_SELECTION, true);
  if (shown.kind === "redirect") redirect(shown.to);
  if (shown.kind === "error") return <SnapshotOpenError replay={shown.replay} message={shown.message} offers={shown.offers} configSource={ctx.config.source} />;
  const nowMs = Date.now();
  const snapshot = shown.kind === "snapshot" ? shown.snapshot : undefined;
  // The page's first chart waits on this answer: asked for with the HTML rather than once the scripts have run.
  const view = searchTexts(search, ["from", "to", "cluster", "resource", "at"]);
  const range = linkRange(view.from, view.to, nowMs, snapshot);
  if (range)
    preload(clientsUrl({ ...range, cluster: view.cluster, resource: view.resource, atMs: atInside(parseAtParam(view.at), range), snapshot: snapshot?.id }), {
      as: "fetch",
      crossOrigin: "anonymous",
    });
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <ClientsView initialNowMs={nowMs} snapshot={snapshot} prometheus={ctx.config.prometheus !== null} />
    </Suspense>
  );
}
