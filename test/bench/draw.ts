/**
 * Time until every Write load panel is drawn in Chromium (48 h range, answer reuse off) against
 * Prometheus's own UI (/graph) drawing one of the same queries over the same range, in one browser,
 * alternating, from navigation to drawn, for a first visit and a returning one. Target ≤ 1.0×.
 * A second peer is the same work: Prometheus's UI drawing each chart's query in a panel of its own.
 * Each page times itself (recordPaints): the frame that paints the last chart, since navigation began.
 * A panel with nothing to draw counts when its one line is painted. The write-rate charts above the
 * signals (the page's first six) are timed on their own too.
 * Run: npm run build && npx tsx test/bench/draw.ts
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BrowserContext, Page } from "playwright-core";
import { writeLoadRequests } from "@/lib/panels/write-load-requests";
import { startApp, writeConfig } from "../helpers/app";
import { drawnSelector, launchBrowser, launchProfile } from "../helpers/browser";
import { startPrometheus } from "../helpers/prometheus";
import { buildWriteLoadScenario, PROJECT_JOB } from "../helpers/write-load-scenario";
import { percentile, report, round } from "./report";

const TO_MS = Date.parse("2026-09-11T18:00:00Z");
const FROM_MS = TO_MS - 48 * 3_600_000;
const ROUNDS = Number(process.env.ROUNDS ?? 7);
const RATE_CHARTS = ["writes-by-resource", "writes-by-verb", "effective-writes", "write-errors", "lease-renewals", "watch-fanout"];

async function main() {
  const prom = await startPrometheus(buildWriteLoadScenario());
  const app = await startApp({ CHURNSCOPE_CONFIG: writeConfig(`prometheus:\n  url: ${prom.url}\n  scrapeIntervalSeconds: 15\n  cacheSeconds: 0\n`) });
  const browser = await launchBrowser();
  try {
    const resource = "connectors.networking.datumapis.com";
    const churnscope = `${app.url}/?from=${FROM_MS}&to=${TO_MS}&apiserver=${PROJECT_JOB}&resource=${resource}`;
    // Each chart's query as the page sends it (its first, for a chart that sends two), for Prometheus's UI.
    const calls = writeLoadRequests({ startMs: FROM_MS, endMs: TO_MS, apiserver: PROJECT_JOB, resource });
    // Every chart the page draws: each panel it asks for but the totals table.
    const charts = [...new Set(Object.values(calls).flatMap((c) => (c && c.panel !== "write-totals" ? [c.panel] : [])))];
    const answers = await Promise.all(
      charts.map(async (id) => {
        const call = Object.values(calls).find((c) => c?.panel === id);
        const params = new URLSearchParams({
          from: String(FROM_MS),
          to: String(TO_MS),
          apiserver: PROJECT_JOB,
          width: "700",
          ...(call?.resource ? { resource: call.resource } : {}),
        });
        return ((await (await fetch(`${app.url}/api/panels/${id}?${params}`)).json()) as { data: { query: string; series: unknown[] } }).data;
      }),
    );
    // Prometheus's UI draws nothing for a query that answers nothing (it never paints a line to time).
    const queries = answers.filter((a) => a.series.length > 0).map((a) => a.query);
    const end = new Date(TO_MS).toISOString().slice(0, 19).replace("T", " ");
    const promPanel = (i: number, expr: string) =>
      `g${i}.expr=${encodeURIComponent(expr)}&g${i}.tab=0&g${i}.stacked=${i === 0 ? 1 : 0}&g${i}.range_input=48h&g${i}.end_input=${encodeURIComponent(end)}&g${i}.show_exemplars=0`;
    const promOne = `${prom.url}/graph?${promPanel(0, queries[0])}`;
    const promAll = `${prom.url}/graph?${queries.map((q, i) => promPanel(i, q)).join("&")}`;
    const view = { viewport: { width: 1400, height: 1000 }, timezoneId: "UTC" };
    // A first visit (a new browser profile each round: no cache, no cookies), and a returning one (one
    // profile on disk throughout, as an SRE opening an alert link in their own browser: cached scripts
    // and the code V8 compiled from them, and the width cookie that lets the server start the panel
    // requests with the HTML).
    for (const visit of ["first", "returning"] as const) {
      const profiles = visit === "returning" ? [mkdtempSync(join(tmpdir(), "churnscope-profile-")), mkdtempSync(join(tmpdir(), "prometheus-profile-"))] : [];
      const oursContext = visit === "returning" ? await launchProfile(profiles[0], view) : null;
      const theirsContext = visit === "returning" ? await launchProfile(profiles[1], view) : null;
      const open = async (context: BrowserContext | null, url: string, selectors: Record<string, string>) => {
        const page = context ? await context.newPage() : await browser.newPage(view);
        await recordPaints(page, selectors);
        await page.goto(url, { waitUntil: "commit" });
        const times = await paintTimes(page, Object.keys(selectors).length);
        await page.close();
        return times;
      };
      const last = (times: Record<string, number>, names = Object.keys(times)) => Math.max(...names.map((n) => times[n]));
      // Debian's Prometheus 2.42 serves the classic UI, which draws with Rickshaw into an SVG, a graph_wrapper<i> per panel.
      const promChart = (i: number) => `#graph_wrapper${i} .graph_area .rickshaw_graph svg path`;
      const samples = { ours: [] as number[], rates: [] as number[], one: [] as number[], all: [] as number[] };
      for (let i = 0; i < ROUNDS + 1; i++) {
        const ours = await open(oursContext, churnscope, Object.fromEntries(charts.map((id) => [id, drawnSelector(id, true)])));
        const one = await open(theirsContext, promOne, { chart: promChart(0) });
        const all = await open(theirsContext, promAll, Object.fromEntries(queries.map((_, n) => [n, promChart(n)])));
        // The first round warms both servers' code paths (and, returning, each profile's cache and cookies).
        if (i > 0) {
          samples.ours.push(last(ours));
          samples.rates.push(last(ours, RATE_CHARTS));
          samples.one.push(last(one));
          samples.all.push(last(all));
        }
      }
      await oursContext?.close();
      await theirsContext?.close();
      for (const dir of profiles) rmSync(dir, { recursive: true, force: true });
      const [p50, ratesP50, peerP50, sameWorkP50] = [samples.ours, samples.rates, samples.one, samples.all].map((ms) => percentile(ms, 50));
      report({
        bench: "draw-write-load",
        visit,
        rangeHours: 48,
        charts: charts.length,
        rounds: ROUNDS,
        p50Ms: round(p50),
        rateChartsP50Ms: round(ratesP50),
        peer: "Prometheus /graph drawing the first chart's query",
        peerP50Ms: round(peerP50),
        ratio: round(p50 / peerP50),
        target: "≤ 1.0×",
        sameWorkPeer: `Prometheus /graph drawing each chart's query in a panel of its own (${queries.length} panels)`,
        sameWorkPeerP50Ms: round(sameWorkP50),
        sameWorkRatio: round(p50 / sameWorkP50),
      });
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
  await page.waitForFunction((n) => Object.values((window as unknown as { __paints: Record<string, number> }).__paints).length >= n, count, {
    timeout: 60_000,
  });
  return page.evaluate(() => (window as unknown as { __paints: Record<string, number> }).__paints);
}

void main();
