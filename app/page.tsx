import { cookies } from "next/headers";
import { redirect } from "next/navigation";
import { connection } from "next/server";
import { Suspense } from "react";
import { preload } from "react-dom";
import { SnapshotOpenError } from "@/components/snapshot/snapshot-open-error";
import { WriteLoadView } from "@/components/write-load/write-load-view";
import { configuredApiservers } from "@/lib/panels/apiservers";
import { WIDTH_COOKIE, widthFromCookie } from "@/lib/panels/panel-url";
import { writeLoadPreloads } from "@/lib/panels/write-load-requests";
import { getServerContext } from "@/lib/server/context";
import { pageSnapshot, type Search } from "@/lib/server/page-snapshot";

export default async function WriteLoadPage({ searchParams }: { searchParams: Promise<Search> }) {
  // Read configuration at request time, never at build time.
  await connection();
  const ctx = getServerContext();
  const search = await searchParams;
  const shown = pageSnapshot(ctx, search, "/", {
    apiserver: (s) => s.initialView?.apiserver,
    resource: (s) => s.initialView?.resource,
  });
  if (shown.kind === "redirect") redirect(shown.to);
  if (shown.kind === "error") return <SnapshotOpenError replay={shown.replay} message={shown.message} configSource={ctx.config.source} />;
  const nowMs = Date.now();
  // A browser that has been here before said how wide its page is: start its panel requests with the
  // HTML instead of after the scripts have run and measured the page (about half a second later).
  const width = widthFromCookie((await cookies()).get(WIDTH_COOKIE)?.value);
  if (shown.kind === "live" && width !== null) {
    const text = (key: string) => (typeof search[key] === "string" ? search[key] : undefined);
    for (const url of writeLoadPreloads({ from: text("from"), to: text("to"), apiserver: text("apiserver"), resource: text("resource") }, width, nowMs)) preload(url, { as: "fetch", crossOrigin: "anonymous" });
  }
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <WriteLoadView
        initialNowMs={nowMs}
        configuredApiservers={configuredApiservers(ctx.config.apiservers)}
        snapshot={shown.kind === "snapshot" ? shown.snapshot : undefined}
      />
    </Suspense>
  );
}
