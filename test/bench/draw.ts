/**
 * Time until every Write load chart is drawn in Chromium (48 h range, answer reuse off) against
 * Prometheus's own UI (/graph) drawing one of the same queries over the same range, in one browser,
 * alternating, from navigation to drawn, for a first visit and a returning one. Target ≤ 1.0×.
 * Run: npm run build && npx tsx test/bench/draw.ts
 */
import { writeLoadRequests } from "@/lib/panels/write-load-requests";
import { startApp, writeConfig } from "../helpers/app";
import { launchBrowser } from "../helpers/browser";
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
    // profile throughout, as an SRE opening an alert link in their own browser: cached scripts, and
    // the width cookie that lets the server start the panel requests with the HTML).
    for (const visit of ["first", "returning"] as const) {
      const oursContext = visit === "returning" ? await browser.newContext(view) : null;
      const theirsContext = visit === "returning" ? await browser.newContext(view) : null;
      const ours: number[] = [];
      const theirs: number[] = [];
      for (let i = 0; i < ROUNDS + 1; i++) {
        const page = oursContext ? await oursContext.newPage() : await browser.newPage(view);
        let start = performance.now();
        await page.goto(churnscope);
        for (const id of CHARTS) await page.waitForSelector(`[data-panel="${id}"][data-state="ready"]:not([data-updating]) [data-chart][data-drawn]`, { state: "attached", timeout: 60_000 });
        const oursMs = performance.now() - start;
        await page.close();
        const other = theirsContext ? await theirsContext.newPage() : await browser.newPage(view);
        start = performance.now();
        await other.goto(promUi);
        // Debian's Prometheus 2.42 serves the classic UI, which draws with Rickshaw into an SVG.
        await other.waitForSelector(".graph_area .rickshaw_graph svg path", { state: "attached", timeout: 60_000 });
        const theirsMs = performance.now() - start;
        await other.close();
        // The first round warms both servers' code paths (and, returning, each profile's cache and cookies).
        if (i > 0) {
          ours.push(oursMs);
          theirs.push(theirsMs);
        }
      }
      await oursContext?.close();
      await theirsContext?.close();
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

void main();
