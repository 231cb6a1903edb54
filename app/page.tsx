import { redirect } from "next/navigation";
import { connection } from "next/server";
import { Suspense } from "react";
import { PanelPreloads } from "@/components/panels/panel-preloads";
import { SnapshotOpenError } from "@/components/snapshot/snapshot-open-error";
import { WriteLoadView } from "@/components/write-load/write-load-view";
import { configuredApiservers } from "@/lib/panels/apiservers";
import { writeLoadPreloads } from "@/lib/panels/write-load-requests";
import { getServerContext } from "@/lib/server/context";
import { pageSnapshot, searchTexts, type Search } from "@/lib/server/page-snapshot";

export default async function WriteLoadPage({ searchParams }: { searchParams: Promise<Search> }) {
  // Read configuration at request time, never at build time.
  await connection();
  const ctx = getServerContext();
  const search = await searchParams;
  const shown = await pageSnapshot(ctx, search, "/", {
    apiserver: (s) => s.initialView?.apiserver,
    resource: (s) => s.initialView?.resource,
  });
  if (shown.kind === "redirect") redirect(shown.to);
  if (shown.kind === "error") return <SnapshotOpenError replay={shown.replay} message={shown.message} offers={shown.offers} configSource={ctx.config.source} />;
  const nowMs = Date.now();
  const snapshot = shown.kind === "snapshot" ? shown.snapshot : undefined;
  const view = searchTexts(search, ["from", "to", "apiserver", "resource", "dryRun"]);
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <WriteLoadView initialNowMs={nowMs} configuredApiservers={configuredApiservers(ctx.config.apiservers)} snapshot={snapshot} />
      <PanelPreloads urls={(widths) => writeLoadPreloads(view, widths, nowMs, snapshot)} selector={`main[data-view="write-load"]`} />
    </Suspense>
  );
}
