import { redirect } from "next/navigation";
import { connection } from "next/server";
import { Suspense } from "react";
import { RebuildsView } from "@/components/rebuilds/rebuilds-view";
import { SnapshotOpenError } from "@/components/snapshot/snapshot-open-error";
import { getServerContext } from "@/lib/server/context";
import { pageSnapshot, type Search } from "@/lib/server/page-snapshot";

export default async function RebuildsPage({ searchParams }: { searchParams: Promise<Search> }) {
  await connection();
  const ctx = getServerContext();
  const shown = pageSnapshot(ctx, await searchParams, "/rebuilds", {
    site: (s) => s.initialView?.site,
    at: (s) => (s.initialView?.atMs === undefined ? undefined : String(s.initialView.atMs)),
  });
  if (shown.kind === "redirect") redirect(shown.to);
  if (shown.kind === "error") return <SnapshotOpenError replay={shown.replay} message={shown.message} configSource={ctx.config.source} />;
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <RebuildsView initialNowMs={Date.now()} siteLabel={ctx.config.siteLabel} snapshot={shown.kind === "snapshot" ? shown.snapshot : undefined} />
    </Suspense>
  );
}
