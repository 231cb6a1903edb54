import { redirect } from "next/navigation";
import { connection } from "next/server";
import { Suspense } from "react";
import { NotConfigured } from "@/components/setup/not-configured";
import { WriteLoadView } from "@/components/write-load/write-load-view";
import { failureOf } from "@/lib/api/envelope";
import { configuredApiservers } from "@/lib/panels/apiservers";
import { getServerContext } from "@/lib/server/context";
import { info } from "@/lib/snapshot/lookup";
import type { SnapshotInfo } from "@/lib/snapshot/schema";
import { REPLAY_ID } from "@/lib/snapshot/store";

type Search = Promise<Record<string, string | string[] | undefined>>;

export default async function WriteLoadPage({ searchParams }: { searchParams: Search }) {
  // Read configuration at request time, never at build time.
  await connection();
  const ctx = getServerContext();
  const search = await searchParams;
  const requested = search.snapshot;
  // With no Prometheus configured, the page opens the replay (DESIGN.md §4).
  const snapshotId = typeof requested === "string" ? requested : ctx.config.prometheus ? undefined : REPLAY_ID;
  let snapshot: SnapshotInfo | undefined;
  if (snapshotId !== undefined) {
    try {
      snapshot = info(ctx.snapshots.get(snapshotId), snapshotId);
    } catch (error) {
      const { body } = failureOf(error);
      if (!ctx.config.prometheus) return <NotConfigured configSource={ctx.config.source} problem={`The replay could not be opened: ${body.error}`} />;
      return (
        <main className="mx-auto max-w-3xl p-6">
          <p role="alert" className="rounded bg-[var(--err-bg)] px-3 py-2 text-sm text-[var(--err-fg)]" data-testid="snapshot-open-error">
            Snapshot {snapshotId.slice(0, 40)} could not be opened: {body.error}
          </p>
        </main>
      );
    }
  }
  if (snapshot && search.from === undefined && search.to === undefined && search.apiserver === undefined && search.resource === undefined) {
    // A bare link opens the snapshot's first range and initial selection, written out in the URL so it can be shared as is.
    const first = snapshot.ranges[0];
    const target = new URLSearchParams({ snapshot: snapshot.id, from: String(first.startMs), to: String(first.endMs) });
    if (snapshot.initialView?.apiserver) target.set("apiserver", snapshot.initialView.apiserver);
    if (snapshot.initialView?.resource) target.set("resource", snapshot.initialView.resource);
    redirect(`/?${target}`);
  }
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <WriteLoadView initialNowMs={Date.now()} configuredApiservers={configuredApiservers(ctx.config.apiservers)} snapshot={snapshot} />
    </Suspense>
  );
}
