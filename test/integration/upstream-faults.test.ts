/**
 * Every way an upstream can misbehave, through real processes on loopback: a real Prometheus behind a
 * proxy that answers errors, nothing, junk, data of the wrong shape, an answer that keeps coming,
 * one cut off midway, or a redirect. Each is a clear 502/504 on the panel (never a 500), every query
 * slot comes back, liveness stays green, memory stays bounded, and the next healthy answer is served.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { rssMiB, startApp, writeConfig, type TestApp } from "../helpers/app";
import { startCountingProxy, type CountingProxy, type Fault } from "../helpers/counting-proxy";
import { startPrometheus, type TestPrometheus } from "../helpers/prometheus";
import { buildWriteLoadScenario, PROJECT_JOB } from "../helpers/write-load-scenario";

const FROM_MS = Date.parse("2026-09-11T12:00:00Z");
const TO_MS = Date.parse("2026-09-11T16:00:00Z");
const TIMEOUT_S = 3;
/** What the dashboard's processes may hold after any fault (the pod's limit is 2 GiB). */
const RSS_BOUND_MIB = 1024;

let prom: TestPrometheus;
let proxy: CountingProxy;
let app: TestApp;

beforeAll(async () => {
  prom = await startPrometheus(buildWriteLoadScenario());
  proxy = await startCountingProxy(prom.url);
  const config = [
    `prometheus:`,
    `  url: ${proxy.url}`,
    `  scrapeIntervalSeconds: 15`,
    `  timeoutSeconds: ${TIMEOUT_S}`,
    `  cacheSeconds: 0`,
    `  maxConcurrentQueries: 2`,
    `  maxAnswerMiB: 4`,
  ].join("\n");
  app = await startApp({ CHURNSCOPE_CONFIG: writeConfig(config) });
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await proxy?.stop();
  await prom?.stop();
});

const PANELS = ["writes-by-resource", "lease-renewals", "write-errors", "effective-writes", "rebuild-rate"];
const get = (path: string) => fetch(`${app.url}${path}${path.includes("?") ? "&" : "?"}from=${FROM_MS}&to=${TO_MS}&apiserver=${PROJECT_JOB}`);

async function metric(name: string): Promise<number> {
  const text = await (await fetch(`${app.url}/metrics`)).text();
  const line = text.split("\n").find((l) => l.startsWith(`${name} `) || l.startsWith(`${name}{`));
  return Number(line?.split(" ").at(-1));
}

const FAULTS: [Fault, number[], RegExp][] = [
  [{ kind: "error-json" }, [502], /Prometheus execution error \(HTTP 422\)/],
  [{ kind: "empty" }, [502], /not JSON: \(empty body\)/],
  [{ kind: "junk" }, [502], /not JSON/],
  [{ kind: "data-null" }, [502], /answered success, but its data is not/],
  [{ kind: "wrong-shape" }, [502], /answered success, but its data is not a/],
  [{ kind: "huge", hugeMiB: 600 }, [502], /more than 4 MiB \(prometheus\.maxAnswerMiB\)/],
  [{ kind: "cut" }, [502], /unreachable|closed before the answer was complete/],
  [{ kind: "redirect" }, [502], /redirect \(HTTP 302\)/],
  [{ kind: "html503" }, [502], /HTTP 503 with a body that is not JSON/],
  [{ kind: "slow", delayMs: 10_000 }, [504], /did not answer within 3 s/],
];

describe("upstream faults", () => {
  for (const [fault, statuses, message] of FAULTS) {
    it(`${fault.kind}: every panel fails clearly, every slot comes back, the next healthy answer is served`, async () => {
      proxy.fault = fault;
      try {
        const answers = await Promise.all([...PANELS.map((id) => get(`/api/panels/${id}`)), get("/api/apiservers"), get("/api/snapshots/export")]);
        for (const res of answers) {
          const body = await res.json();
          const where = res.url.split("?")[0];
          // The export asks for every panel at once and answers with the first failure, whichever it is.
          const exported = where.endsWith("/export");
          expect([where, res.status]).toEqual([where, expect.toSatisfy((s: number) => (exported ? [502, 504] : statuses).includes(s))]);
          expect(body.status).toBe("error");
          if (!exported) expect(body.error).toMatch(message);
          expect(res.headers.get("x-content-type-options")).toBe("nosniff");
        }
      } finally {
        proxy.fault = undefined;
      }
      // Every slot is back within the deadline, liveness is green, and memory is bounded.
      let active = -1;
      for (let i = 0; i < 40 && active !== 0; i++) {
        active = await metric("churnscope_prometheus_queries_active");
        if (active !== 0) await new Promise((r) => setTimeout(r, 250));
      }
      expect(active).toBe(0);
      expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
      expect(rssMiB(app)).toBeLessThan(RSS_BOUND_MIB);
      const healthy = await get("/api/panels/writes-by-resource");
      expect(healthy.status).toBe(200);
      // The scenario has no rebuild metrics: healthy, the rebuild panel says so; under the next fault it must fail, not
      // repeat this absence from a cache.
      const rebuilds = await (await get("/api/panels/rebuild-rate")).json();
      expect([rebuilds.status, rebuilds.infos?.[0]]).toEqual(["success", expect.stringMatching(/^No rebuild metrics in this range/)]);
    }, 60_000);
  }
});
