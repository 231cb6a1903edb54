import { redirect } from "next/navigation";
import { connection } from "next/server";
import { Suspense } from "react";
import { CompareView } from "@/components/compare/compare-view";
import { SnapshotOpenError } from "@/components/snapshot/snapshot-open-error";
import { comparePresets, counterPresets } from "@/lib/compare/catalog";
import { getServerContext } from "@/lib/server/context";
import { pageSnapshot, type Search } from "@/lib/server/page-snapshot";

export default async function ComparePage({ searchParams }: { searchParams: Promise<Search> }) {
  await connection();
  const ctx = getServerContext();
  const shown = await pageSnapshot(ctx, await searchParams, "/compare", {
    a: (s) => s.comparisons[0]?.a,
    b: (s) => s.comparisons[0]?.b,
    window: (s) => s.comparisons[0]?.window,
  });
  if (shown.kind === "redirect") redirect(shown.to);
  if (shown.kind === "error") return <SnapshotOpenError replay={shown.replay} message={shown.message} offers={shown.offers} configSource={ctx.config.source} />;
  const snapshot = shown.kind === "snapshot" ? shown.snapshot : undefined;
  // A snapshot names its API servers' roles, so its counters get the same titles as live ones.
  const jobs = (role: string) => (snapshot?.apiservers ?? []).filter((a) => a.role === role).map((a) => a.job);
  const counters = counterPresets(snapshot ? { project: jobs("project"), hub: jobs("hub") } : ctx.config.apiservers);
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <CompareView initialNowMs={Date.now()} counters={counters} presets={comparePresets(counters)} snapshot={snapshot} />
    </Suspense>
  );
}
