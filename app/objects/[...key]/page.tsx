import { redirect } from "next/navigation";
import { connection } from "next/server";
import { Suspense } from "react";
import { TimelineView } from "@/components/objects/timeline-view";
import { SnapshotOpenError } from "@/components/snapshot/snapshot-open-error";
import { getServerContext } from "@/lib/server/context";
import { pageSnapshot, type Search } from "@/lib/server/page-snapshot";

export default async function ObjectTimelinePage({ params, searchParams }: { params: Promise<{ key: string[] }>; searchParams: Promise<Search> }) {
  await connection();
  const ctx = getServerContext();
  const { key } = await params;
  if (key.length !== 5) {
    return (
      <main className="mx-auto max-w-3xl p-6">
        <p role="alert" className="rounded bg-[var(--err-bg)] px-3 py-2 text-sm text-[var(--err-fg)]">
          An object link is /objects/&#123;cluster&#125;/&#123;group&#125;/&#123;kind&#125;/&#123;namespace&#125;/&#123;name&#125; (group core for the core API, namespace _ when
          cluster-scoped); this one has {key.length} parts.
        </p>
      </main>
    );
  }
  const [cluster, group, kind, namespace, name] = key;
  const objectKey = { cluster, group: group === "core" ? "" : group, kind, namespace: namespace === "_" ? "" : namespace, name };
  const shown = pageSnapshot(ctx, await searchParams, `/objects/${key.map(encodeURIComponent).join("/")}`, {});
  if (shown.kind === "redirect") redirect(shown.to);
  if (shown.kind === "error") return <SnapshotOpenError replay={shown.replay} message={shown.message} configSource={ctx.config.source} />;
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <TimelineView initialNowMs={Date.now()} snapshot={shown.kind === "snapshot" ? shown.snapshot : undefined} objectKey={objectKey} />
    </Suspense>
  );
}
