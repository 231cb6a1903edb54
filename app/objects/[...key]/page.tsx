import { redirect } from "next/navigation";
import { connection } from "next/server";
import { Suspense } from "react";
import { TimelineView } from "@/components/objects/timeline-view";
import { SnapshotOpenError } from "@/components/snapshot/snapshot-open-error";
import { getServerContext } from "@/lib/server/context";
import { hasLiveObjects } from "@/lib/server/recording";
import { pageSnapshot, type Search } from "@/lib/server/page-snapshot";
import { objectKeyFromSegments, objectPath } from "@/lib/objects/key";
import type { ObjectKey } from "@/lib/wire/objects";

export default async function ObjectTimelinePage({ params, searchParams }: { params: Promise<{ key: string[] }>; searchParams: Promise<Search> }) {
  await connection();
  const ctx = getServerContext();
  const { key } = await params;
  let objectKey: ObjectKey;
  try {
    objectKey = objectKeyFromSegments(key);
  } catch (error) {
    return (
      <main className="mx-auto max-w-3xl p-6">
        <p role="alert" className="rounded bg-[var(--err-bg)] px-3 py-2 text-sm text-[var(--err-fg)]">
          Not an object link: {(error as Error).message}.
        </p>
      </main>
    );
  }
  const shown = await pageSnapshot(ctx, await searchParams, `/objects/${objectPath(objectKey)}`, {}, await hasLiveObjects(ctx));
  if (shown.kind === "redirect") redirect(shown.to);
  if (shown.kind === "error") return <SnapshotOpenError replay={shown.replay} message={shown.message} offers={shown.offers} configSource={ctx.config.source} />;
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <TimelineView initialNowMs={Date.now()} snapshot={shown.kind === "snapshot" ? shown.snapshot : undefined} objectKey={objectKey} />
    </Suspense>
  );
}
