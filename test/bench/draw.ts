/**
 * Time until every Write load chart is drawn in Chromium (48 h range, answer reuse off) against
 * Prometheus's own UI (/graph) drawing one of the same queries over the same range, in one browser,
 * alternating, from navigation to drawn, for a first visit and a returning one. Target ≤ 1.0×.
 * Each page times itself (recordPaints): the frame that paints the last chart, since navigation began.
 * Run: npm run build && npx tsx test/bench/draw.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { writeLoadRequests } from "@/lib/panels/write-load-requests";
import { startApp, writeConfig } from "../helpers/app";
import { launchBrowser, launchProfile } from "../helpers/browser";
import { startPrometheus } from "../helpers/prometheus";
import { buildWriteLoadScenario, PROJECT_JOB } from "../helpers/write-load-scenario";
import { percentile, report, round } from "./report";

const TO_MS = Date.parse("2026-09-11T18:00:00Z");
const FROM_MS = TO_MS - 48 * 3_600_000;
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const CHARTS = ["writes-by-resource", "writes-by-verb", "effective-writes", "write-errors", "lease-renewals", "watch-fanout"];

async function main() {
  const prom = await startPrometheus(buildWriteLoadScenario());
  const app = await startApp({ CHURNSCOPE_CONFIG: writeConfig(`prometheus:\n  url: ${prom.url}\n  scrapeIntervalSeconds: 15\n  cacheSeconds: 0\n`) });
  const browser = await launchBrowser();
  try {
    const resource = "connectors.networking.datumapis.com";
    const churnscope = `${app.url}/?from=${FROM_MS}&to=${TO_MS}&apiserver=${PROJECT_JOB}&resource=${resource}`;
    // The first chart's query as the page sends it, for Prometheus's UI.
    const call = writeLoadRequests({ startMs: FROM_MS, endMs: TO_MS, apiserver: PROJECT_JOB, resource }).writesByResource;
    const first = await (await fetch(`${app.url}/api/panels/${call.panel}?from=${FROM_MS}&to=${TO_MS}&apiserver=${PROJECT_JOB}&width=700`)).json();
    const end = new Date(TO_MS).toISOString().slice(0, 19).replace("T", " ");
    const promUi = `${prom.url}/graph?g0.expr=${encodeURIComponent(first.data.query)}&g0.tab=0&g0.stacked=1&g0.range_input=48h&g0.end_input=${encodeURIComponent(end)}&g0.show_exemplars=0`;
    const view = { viewport: { width: 1400, height: 1000 }, timezoneId: "UTC" };
    // A first visit (a new browser profile each round: no cache, no cookies), and a returning one (one
    // profile on disk throughout, as an SRE opening an alert link in their own browser: cached scripts
    // and the code V8 compiled from them, and the width cookie that lets the server start the panel
    // requests with the HTML).
    for (const visit of ["first", "returning"] as const) {
      const profiles = visit === "returning" ? [mkdtempSync(join(tmpdir(), "churnscope-profile-")), mkdtempSync(join(tmpdir(), "prometheus-profile-"))] : [];
      const oursContext = visit === "returning" ? await launchProfile(profiles[0], view) : null;
      const theirsContext = visit === "returning" ? await launchProfile(profiles[1], view) : null;
      const ours: number[] = [];
      const theirs: number[] = [];
      for (let i = 0; i < ROUNDS + 1; i++) {
        const page = oursContext ? await oursContext.newPage() : await browser.newPage(view);
        await recordPaints(page, Object.fromEntries(CHARTS.map((id) => [id, `[data-panel="${id}"][data-state="ready"]:not([data-updating]) [data-chart][data-drawn]`])));
        await page.goto(churnscope, { waitUntil: "commit" });
        const oursMs = Math.max(...Object.values(await paintTimes(page, CHARTS.length)));
        await page.close();
        const other = theirsContext ? await theirsContext.newPage() : await browser.newPage(view);
        // Debian's Prometheus 2.42 serves the classic UI, which draws with Rickshaw into an SVG.
        await recordPaints(other, { chart: ".graph_area .rickshaw_graph svg path" });
        await other.goto(promUi, { waitUntil: "commit" });
        const theirsMs = (await paintTimes(other, 1)).chart;
        await other.close();
        // The first round warms both servers' code paths (and, returning, each profile's cache and cookies).
        if (i > 0) {
          ours.push(oursMs);
          theirs.push(theirsMs);
        }
      }
      await oursContext?.close();
      await theirsContext?.close();
      for (const dir of profiles) rmSync(dir, { recursive: true, force: true });
      const p50 = percentile(ours, 50);
      const peerP50 = percentile(theirs, 50);
      report({ bench: "draw-write-load", visit, rangeHours: 48, charts: CHARTS.length, rounds: ROUNDS, p50Ms: round(p50), peer: "Prometheus /graph drawing the first chart's query", peerP50Ms: round(peerP50), ratio: round(p50 / peerP50), target: "≤ 1.0×" });
    }
  } finally {
    await browser.close();
    await app.stop();
    await prom.stop();
  }
}

/**
 * Records, in the page, when each selector first matches an element that is not hidden: the time of
 * the animation frame that paints it, since the page's navigation started. Both pages are timed
 * alike. Waiting from outside would see a match only once the page's scripts let go of the main
 * thread, which can be long after the browser painted what the HTML brought.
 */
async function recordPaints(page: Page, selectors: Record<string, string>): Promise<void> {
  // As text: a function here would be compiled with helpers the page does not have.
  await page.addInitScript(`(() => {
    const wanted = ${JSON.stringify(selectors)};
    const times = (window.__paints = {});
    function frame(nowMs) {
      for (const [name, selector] of Object.entries(wanted)) {
        if (name in times) continue;
        const element = document.querySelector(selector);
        if (element && !element.closest("[hidden]")) times[name] = nowMs;
      }
      if (Object.keys(times).length < Object.keys(wanted).length) requestAnimationFrame(frame);
    }
    requestAnimationFrame(frame);
  })();`);
}

async function paintTimes(page: Page, count: number): Promise<Record<string, number>> {
  await page.waitForFunction((n) => Object.values((window as unknown as { __paints: Record<string, number> }).__paints).length >= n, count, { timeout: 60_000 });
  return page.evaluate(() => (window as unknown as { __paints: Record<string, number> }).__paints);
}

void main();
