import { redirect } from "next/navigation";
import { connection } from "next/server";
import { Suspense } from "react";
import { SnapshotOpenError } from "@/components/snapshot/snapshot-open-error";
import { WriteLoadView } from "@/components/write-load/write-load-view";
import { configuredApiservers } from "@/lib/panels/apiservers";
import { getServerContext } from "@/lib/server/context";
import { pageSnapshot, type Search } from "@/lib/server/page-snapshot";

export default async function WriteLoadPage({ searchParams }: { searchParams: Promise<Search> }) {
  // Read configuration at request time, never at build time.
  await connection();
  const ctx = getServerContext();
  const shown = pageSnapshot(ctx, await searchParams, "/", {
    apiserver: (s) => s.initialView?.apiserver,
    resource: (s) => s.initialView?.resource,
  });
  if (shown.kind === "redirect") redirect(shown.to);
  if (shown.kind === "error") return <SnapshotOpenError replay={shown.replay} message={shown.message} configSource={ctx.config.source} />;
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <WriteLoadView
        initialNowMs={Date.now()}
        configuredApiservers={configuredApiservers(ctx.config.apiservers)}
        snapshot={shown.kind === "snapshot" ? shown.snapshot : undefined}
      />
    </Suspense>
  );
}
