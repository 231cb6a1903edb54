import { redirect } from "next/navigation";
import { connection } from "next/server";
import { Suspense } from "react";
import { LanesView } from "@/components/objects/lanes-view";
import { SnapshotOpenError } from "@/components/snapshot/snapshot-open-error";
import { getServerContext } from "@/lib/server/context";
import { hasLiveObjects } from "@/lib/server/recording";
import { objectScope, pageSnapshot, type Search } from "@/lib/server/page-snapshot";

export default async function LanesPage({ searchParams }: { searchParams: Promise<Search> }) {
  await connection();
  const ctx = getServerContext();
  const shown = await pageSnapshot(ctx, await searchParams, "/objects/lanes", objectScope(true), await hasLiveObjects(ctx));
  if (shown.kind === "redirect") redirect(shown.to);
  if (shown.kind === "error") return <SnapshotOpenError replay={shown.replay} message={shown.message} offers={shown.offers} configSource={ctx.config.source} />;
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <LanesView initialNowMs={Date.now()} snapshot={shown.kind === "snapshot" ? shown.snapshot : undefined} />
    </Suspense>
  );
}
