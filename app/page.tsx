import { cookies, headers } from "next/headers";
import { redirect } from "next/navigation";
import { connection } from "next/server";
import { Suspense } from "react";
import { preload } from "react-dom";
import { SnapshotOpenError } from "@/components/snapshot/snapshot-open-error";
import { WriteLoadView } from "@/components/write-load/write-load-view";
import { configuredApiservers } from "@/lib/panels/apiservers";
import { chartWidths, WIDTH_COOKIE, widthFromCookie } from "@/lib/panels/panel-url";
import { preloadScript } from "@/lib/panels/preload-script";
import { WIDTH_SLOTS, writeLoadPreloads } from "@/lib/panels/write-load-requests";
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
  // Start the panel requests before the page's scripts have loaded and measured it (about half a
  // second): with the HTML when the browser's cookie says how wide the page was last time, and else (or
  // if the window has changed since) from an inline script as soon as the page is laid out. The browser
  // sends a request preloaded twice once.
  const text = (key: string) => (typeof search[key] === "string" ? search[key] : undefined);
  const view = { from: text("from"), to: text("to"), apiserver: text("apiserver"), resource: text("resource") };
  const templates = shown.kind === "live" ? writeLoadPreloads(view, WIDTH_SLOTS, nowMs) : [];
  const lastWidth = widthFromCookie((await cookies()).get(WIDTH_COOKIE)?.value);
  if (templates.length > 0 && lastWidth !== null) for (const url of writeLoadPreloads(view, chartWidths(lastWidth), nowMs)) preload(url, { as: "fetch", crossOrigin: "anonymous" });
  const nonce = (await headers()).get("x-nonce") ?? undefined;
  return (
    <Suspense fallback={<div className="p-4 text-sm text-[var(--muted)]">Loading…</div>}>
      <WriteLoadView
        initialNowMs={nowMs}
        configuredApiservers={configuredApiservers(ctx.config.apiservers)}
        snapshot={shown.kind === "snapshot" ? shown.snapshot : undefined}
      />
      {templates.length > 0 && <script nonce={nonce} dangerouslySetInnerHTML={{ __html: preloadScript(templates, `main[data-view="write-load"]`, WIDTH_SLOTS) }} />}
    </Suspense>
  );
}
