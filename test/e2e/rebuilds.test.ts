/**
 * The Edge rebuilds page on the replay in Debian's Chromium: every chart draws, each site has its
 * small multiple, the capped quantiles carry their warning, the before/after table shows the
 * onset's jump with the generator's numbers, a site can be picked, and the panel requests start
 * from the page's preload script. Screenshots in test-results/.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { formatUtc } from "@/lib/format/time";
import { describe, expect, it } from "vitest";
import { formatNumber } from "@/lib/format/number";
import { REBUILD_CHARTS } from "@/lib/rebuilds/requests";
import { ARTIFACTS, waitForDrawn } from "../helpers/browser";
import { useReplayApp } from "../helpers/replay-app";

const h = useReplayApp();

/** Every chart drawn, or said in one line to be one the gateway cannot answer. */
const waitForCharts = (page: Page) => waitForDrawn(page, REBUILD_CHARTS, { state: "attached", orNotShown: true });

describe("Edge rebuilds on the replay in Chromium", () => {
  it("draws every chart per site, warns on capped quantiles, and compares before and after the onset", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const asked: string[] = [];
    page.on("request", (r) => {
      if (/\/api\/(panels|markers)/.test(r.url())) asked.push(r.url().slice(h.app.url.length));
    });
    await page.goto(`${h.app.url}/rebuilds`);
    await page.waitForURL((url) => url.searchParams.get("at") === String(h.replay.params.onsetMs));
    await waitForCharts(page);
    // The page's inline script preloaded every panel request (10 charts, 4 summaries) at the width the
    // page measured, and the markers; the page took each preloaded answer: no URL was asked for twice.
    await page.waitForLoadState("networkidle");
    const preloads = await page.$$eval('link[rel="preload"][as="fetch"]', (links) =>
      links.map((l) => (l as HTMLLinkElement).href.slice(location.origin.length)),
    );
    expect(preloads.length).toBe(15);
    expect(asked.sort()).toEqual(preloads.sort());
    // The before/after box shows the time it holds; its hint is a format, never a time that could pass for one set.
    // The onset as every page prints times, with its seconds where it has them.
    const onset = h.replay.params.onsetMs;
    expect(await page.inputValue('[data-testid="at-input"]')).toBe(formatUtc(onset, onset % 60_000 !== 0));
    expect(await page.getAttribute('[data-testid="at-input"]', "placeholder")).not.toMatch(/\d/);
    await expect(page.textContent('[data-testid="rebuild-profile"]')).resolves.toMatch(/Envoy Gateway ≥ 1\.5/);
    // Envoy Gateway times two stages and does not split its rebuilds by type: that panel is one line saying so.
    expect(await page.locator('[data-panel="rebuild-stages"] [data-chart][data-drawn]').count()).toBe(1);
    await expect(page.textContent('[data-testid="panel-not-shown"][data-panel="rebuild-breakdown"]')).resolves.toMatch(
      /^Rebuilds by type: Envoy Gateway ≥ 1\.5 \(xds runner\) does not split its rebuilds by type\.$/,
    );
    expect(await page.$$eval('[data-testid="site-multiples"] [data-site]', (els) => els.map((e) => e.getAttribute("data-site")))).toEqual(
      [...h.replay.params.sites].sort(),
    );
    await expect(page.textContent('[data-panel="rebuild-duration-quantiles"] [data-testid="panel-notices"]')).resolves.toMatch(
      /Warning: p50 reaches the top finite bucket \(10 s\)/,
    );

    // Before/after the onset, per site: rebuilds per hour as the generator counted them.
    const { startMs, endMs, onsetMs } = h.replay.params;
    const site = "edge-ams1";
    const perHour = (from: number, to: number) =>
      h.replay.sink.rebuilds.filter((r) => r.site === site && r.startMs + r.durationMs > from && r.startMs + r.durationMs <= to).length /
      ((to - from) / 3_600_000);
    const row = page.locator(`[data-testid="summary-at"] tr[data-site="${site}"]`);
    await expect(row.locator('[data-cell="rebuilds|left"]').textContent()).resolves.toBe(formatNumber(perHour(startMs, onsetMs)));
    await expect(row.locator('[data-cell="rebuilds|right"]').textContent()).resolves.toBe(formatNumber(perHour(onsetMs, endMs)));
    await page.screenshot({ path: join(ARTIFACTS, "rebuilds.png"), fullPage: true });

    await page.click(`[data-testid="site-multiples"] [data-site="${site}"]`);
    await page.waitForURL((url) => url.searchParams.get("site") === site);
    await page.waitForFunction(() => document.querySelectorAll('[data-panel="rebuild-rate"] [data-testid="legend"] li').length === 1);
    expect(await page.inputValue('[data-testid="site-select"]')).toBe(site);
    await page.screenshot({ path: join(ARTIFACTS, "rebuilds-site.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });
});
