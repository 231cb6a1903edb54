import { redirect } from "next/navigation";
import { connection } from "next/server";
import { Suspense } from "react";
import { PanelPreloads } from "@/components/panels/panel-preloads";
import { RebuildsView } from "@/components/rebuilds/rebuilds-view";
import { rebuildPreloads } from "@/lib/rebuilds/requests";
import { SnapshotOpenError } from "@/components/snapshot/snapshot-open-error";
import { getServerContext } from "@/lib/server/context";
import { pageSnapshot, searchTexts, type Search } from "@/lib/server/page-snapshot";

export default async function RebuildsPage({ searchParams }: { searchParams: Promise<Search> }) {
  await connection();
  const ctx = getServerContext();
  const search = await searchParams;
  const shown = await pageSnapshot(ctx, search, "/rebuilds", {
    site: (s) => s.initialView?.site,
    at: (s) => (s.initialView?.atMs === undefined ? undefined : String(s.initialView.atMs)),
  });
  if (shown.kind === "redirect") redirect(shown.to);
  if (shown.kind === "error") return <SnapshotOpenError replay={shown.replay} message={shown.message} offers={shown.offers} configSource={ctx.config.source} />;
  const nowMs = Date.now();
  const snapshot = shown.kind === "snapshot" ? shown.snapshot : undefined;
  const view = searchTexts(search, ["from", "to", "at"]);
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <RebuildsView initialNowMs={nowMs} siteLabel={ctx.config.siteLabel} snapshot={snapshot} />
      <PanelPreloads urls={(widths) => rebuildPreloads(view, widths, nowMs, snapshot)} selector={`main[data-view="rebuilds"]`} />
    </Suspense>
  );
}
