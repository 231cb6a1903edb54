/**
 * Fifty people open the same alert link at once: every Write load panel reaches Prometheus once,
 * all fifty get the same answer, and /metrics says how requests were shared. With the concurrency
 * limit reached, further panels answer 503 "busy" with a message instead of piling up, and the
 * process keeps serving. A counting proxy on loopback sits between Churnscope and a real Prometheus.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeLoadRequests } from "@/lib/panels/write-load-requests";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { startCountingProxy, type CountingProxy } from "../helpers/counting-proxy";
import { startPrometheus, type TestPrometheus } from "../helpers/prometheus";
import { buildWriteLoadScenario, PROJECT_JOB } from "../helpers/write-load-scenario";

const FROM_MS = Date.parse("2026-09-11T12:00:00Z");
const TO_MS = Date.parse("2026-09-11T16:00:00Z");
const PEOPLE = 50;

let prom: TestPrometheus;
let proxy: CountingProxy;
let app: TestApp;

beforeAll(async () => {
  prom = await startPrometheus(buildWriteLoadScenario());
  proxy = await startCountingProxy(prom.url);
  app = await startApp({
    CHURNSCOPE_CONFIG: writeConfig(
      `prometheus:\n  url: ${proxy.url}\n  scrapeIntervalSeconds: 15\n  cacheSeconds: 60\napiservers:\n  project: [${PROJECT_JOB}]\n`,
    ),
  });
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await proxy?.stop();
  await prom?.stop();
});

describe("an alert storm", () => {
  it("sends each panel's query to Prometheus once for fifty simultaneous viewers", async () => {
    const calls = Object.values(
      writeLoadRequests({ startMs: FROM_MS, endMs: TO_MS, apiserver: PROJECT_JOB, resource: "connectors.networking.datumapis.com" }),
    ).filter((c) => c !== undefined);
    proxy.requests.length = 0;
    const answers = await Promise.all(
      calls.flatMap((call) =>
        Array.from({ length: PEOPLE }, async (_, person) => {
          // Each browser resolved "now" a few milliseconds apart (within one scrape interval and one step).
          const params = new URLSearchParams({ from: String(call.startMs), to: String(call.endMs - 7_000 + person), width: "700", apiserver: PROJECT_JOB });
          if (call.resource) params.set("resource", call.resource);
          const res = await fetch(`${app.url}/api/panels/${call.panel}?${params}`);
          return { panel: `${call.panel} ${call.startMs}`, status: res.status, body: await res.json() };
        }),
      ),
    );
    expect(answers.filter((a) => a.status !== 200).map((a) => a.body.error)).toEqual([]);
    // Every viewer of a panel saw the same data.
    for (const call of calls) {
      const mine = answers.filter((a) => a.panel === `${call.panel} ${call.startMs}`);
      for (const a of mine) expect(a.body.data).toEqual(mine[0].body.data);
    }
    const queries = proxy.requests.filter((r) => r.path === "/api/v1/query_range" || r.path === "/api/v1/query");
    const perQuery = new Map<string, number>();
    for (const r of queries) {
      const key = `${r.query} @ ${r.params.get("time") ?? `${r.params.get("start")}..${r.params.get("end")}/${r.params.get("step")}`}`;
      perQuery.set(key, (perQuery.get(key) ?? 0) + 1);
    }
    expect(
      [...perQuery.values()].every((n) => n === 1),
      JSON.stringify([...perQuery]),
    ).toBe(true);
    const promqlSent = new Set(queries.map((r) => r.query)).size;
    const panelQueries = answers.length / PEOPLE;
    expect(promqlSent).toBeGreaterThanOrEqual(panelQueries);
    expect(queries.length).toBe(perQuery.size);

    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    const shared =
      Number(/churnscope_prometheus_requests_total\{outcome="coalesced"\} (\d+)/.exec(metrics)?.[1]) +
      Number(/churnscope_prometheus_requests_total\{outcome="cached"\} (\d+)/.exec(metrics)?.[1]);
    expect(shared).toBeGreaterThanOrEqual((PEOPLE - 1) * calls.length);
  }, 60_000);
});

describe("past the concurrency limit", () => {
  let small: TestApp;
  beforeAll(async () => {
    small = await startApp({
      CHURNSCOPE_CONFIG: writeConfig(
        `prometheus:\n  url: ${proxy.url}\n  scrapeIntervalSeconds: 15\n  maxConcurrentQueries: 1\n  maxQueuedQueries: 3\n  cacheSeconds: 0\n`,
      ),
    });
  }, 60_000);
  afterAll(async () => {
    proxy.delayMs = 0;
    await small?.stop();
  });

  it("answers 503 busy with a message, never a 500, and serves again once the queue drains", async () => {
    proxy.delayMs = 400;
    const panels = ["writes-by-resource", "lease-renewals", "write-errors", "watch-fanout", "effective-writes"];
    const results = await Promise.all(
      panels.map(async (id) => {
        const res = await fetch(`${small.url}/api/panels/${id}?from=${FROM_MS}&to=${TO_MS}`);
        return { status: res.status, body: await res.json() };
      }),
    );
    expect(results.map((r) => r.status).filter((s) => s !== 200 && s !== 503)).toEqual([]);
    const busy = results.filter((r) => r.status === 503);
    expect(busy.length).toBeGreaterThan(0);
    for (const b of busy) {
      expect(b.body.errorType).toBe("busy");
      expect(b.body.error).toMatch(/Prometheus is busy: 1 queries are running and 3 are waiting \(prometheus\.maxConcurrentQueries\)/);
    }
    proxy.delayMs = 0;
    // Queries of a panel that failed as busy may still be running; the next request waits for the queue to drain.
    for (let i = 0; i < 100; i++) {
      const metrics = await (await fetch(`${small.url}/metrics`)).text();
      if (/churnscope_prometheus_queries_active\{\} 0/.test(metrics) && /churnscope_prometheus_queries_queued\{\} 0/.test(metrics)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const later = await fetch(`${small.url}/api/panels/writes-by-resource?from=${FROM_MS}&to=${TO_MS}`);
    expect(later.status).toBe(200);
  }, 60_000);
});
