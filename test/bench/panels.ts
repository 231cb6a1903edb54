/**
 * Panel API against Prometheus itself, on a real Prometheus holding the write-load scenario:
 * (1) p50 of GET /api/panels/<id> (answer reuse off) vs the same query_range sent straight to
 *     Prometheus, alternating, for each chart of the Write load page; target ≤ 1.10×;
 *     A second peer is the least any server between browser and Prometheus costs: a bare node:http
 *     pass-through that pipes each request and answer unread, on kept-alive connections;
 * (2) 50 concurrent identical requests per panel → queries reaching Prometheus; target 1 per panel.
 * Run: npm run build && npx tsx test/bench/panels.ts
 */
import { writeLoadRequests } from "@/lib/panels/write-load-requests";
import { startApp, writeConfig } from "../helpers/app";
import { startCountingProxy } from "../helpers/counting-proxy";
import { startPrometheus } from "../helpers/prometheus";
import { buildWriteLoadScenario, PROJECT_JOB } from "../helpers/write-load-scenario";
import { startPassThrough } from "./pass-through";
import { percentile, report, round, timed } from "./report";

const FROM_MS = Date.parse("2026-09-11T06:00:00Z");
const TO_MS = Date.parse("2026-09-11T18:00:00Z");
const ROUNDS = Number(process.env.ROUNDS ?? 40);

async function main() {
  const prom = await startPrometheus(buildWriteLoadScenario());
  const passThrough = await startPassThrough(prom.url);
  const proxy = await startCountingProxy(prom.url);
  const uncached = await startApp({ CHURNSCOPE_CONFIG: writeConfig(`prometheus:\n  url: ${prom.url}\n  scrapeIntervalSeconds: 15\n  cacheSeconds: 0\n`) });
  const shared = await startApp({ CHURNSCOPE_CONFIG: writeConfig(`prometheus:\n  url: ${proxy.url}\n  scrapeIntervalSeconds: 15\n`) });
  try {
    const calls = Object.values(
      writeLoadRequests({ startMs: FROM_MS, endMs: TO_MS, apiserver: PROJECT_JOB, resource: "connectors.networking.datumapis.com" }),
    ).filter((c) => c !== undefined && c.panel !== "write-totals");
    const panelUrl = (app: string, c: (typeof calls)[number]) =>
      `${app}/api/panels/${c.panel}?${new URLSearchParams({ from: String(c.startMs), to: String(c.endMs), width: "1000", apiserver: PROJECT_JOB, ...(c.resource ? { resource: c.resource } : {}) })}`;

    for (const call of calls) {
      const first = await (await fetch(panelUrl(uncached.url, call))).json();
      const queries: { promql: string }[] = first.data.queries;
      const form = (promql: string) =>
        new URLSearchParams({
          query: promql,
          start: String(first.data.startMs / 1000),
          end: String(first.data.endMs / 1000),
          step: String(first.data.stepSeconds),
        });
      const direct = (base: string) => () =>
        Promise.all(queries.map((q) => fetch(`${base}/api/v1/query_range`, { method: "POST", body: form(q.promql) }).then((r) => r.text())));
      const api: number[] = [];
      const peer: number[] = [];
      const piped: number[] = [];
      for (let i = 0; i < ROUNDS; i++) {
        // Alternating, so drift in machine load falls on all alike.
        api.push((await timed(() => fetch(panelUrl(uncached.url, call)).then((r) => r.text()))).ms);
        peer.push((await timed(direct(prom.url))).ms);
        piped.push((await timed(direct(passThrough.url))).ms);
      }
      const p50 = percentile(api, 50);
      const peerP50 = percentile(peer, 50);
      const pipedP50 = percentile(piped, 50);
      report({
        bench: "panel-api-vs-prometheus",
        panel: call.panel,
        rounds: ROUNDS,
        queries: queries.length,
        p50Ms: round(p50),
        p90Ms: round(percentile(api, 90)),
        peer: "Prometheus query_range, same PromQL and step",
        peerP50Ms: round(peerP50),
        ratio: round(p50 / peerP50),
        target: "≤ 1.10×",
        passThroughP50Ms: round(pipedP50),
        passThroughRatio: round(pipedP50 / peerP50),
        overPassThrough: round(p50 / pipedP50),
      });
    }

    proxy.requests.length = 0;
    const viewers = 50;
    const { ms } = await timed(() =>
      Promise.all(calls.flatMap((call) => Array.from({ length: viewers }, () => fetch(panelUrl(shared.url, call)).then((r) => r.text())))),
    );
    const sent = proxy.requests.filter((r) => r.path === "/api/v1/query_range" || r.path === "/api/v1/query");
    // A panel may send several queries (effective-writes sends two): count each distinct query once.
    const distinct = new Set(sent.map((r) => `${r.query}|${r.params.get("start")}|${r.params.get("end")}|${r.params.get("step")}|${r.params.get("time")}`))
      .size;
    report({
      bench: "alert-storm",
      viewers,
      panels: calls.length,
      requests: viewers * calls.length,
      distinctQueries: distinct,
      upstreamQueries: sent.length,
      perQuery: round(sent.length / distinct),
      wallMs: round(ms),
      peer: "without sharing: every request sends its queries",
      peerUpstreamQueries: viewers * distinct,
      target: "1 per panel query",
    });
  } finally {
    await shared.stop();
    await uncached.stop();
    await proxy.stop();
    await new Promise((resolve) => passThrough.server.close(resolve));
    await prom.stop();
  }
}

void main();
