/**
 * The JSON API against a real Prometheus backfilled with the write-load scenario. Expected values
 * come from the generator's own counters, never from Prometheus.
 *
 * Exactness: the scenario's samples sit on a 15 s grid and every query instant and window edge
 * used here is on that grid. Prometheus 2.x range selectors include both edges, so rate() and
 * increase() see a sample exactly at each edge and do not extrapolate: the values are exact
 * (Δcount / window, and Δcount). Debian's prometheus 2.42 is what CI installs.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiEnvelope } from "@/lib/api/envelope";
import type { PanelData } from "@/lib/panels/run-panel";
import { PANELS } from "@/lib/panels/catalog";
import { joinResource, splitResource } from "@/lib/panels/resource-name";
import { OTHER_LABEL } from "@/lib/panels/top-n";
import type { CounterSeries } from "@/lib/scenario/counters";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { METRIC_STORES } from "../helpers/metric-stores";
import type { TestPrometheus } from "../helpers/prometheus";
import { buildWriteLoadScenario, HUB_JOB, LEGACY_JOB, OLD_JOB, PROJECT_JOB, truthByKey, truthTotal, writesOf } from "../helpers/write-load-scenario";

const FROM = "2026-09-11T12:00:00Z";
const TO = "2026-09-11T16:00:00Z";
const FROM_S = Date.parse(FROM) / 1000;
const TO_S = Date.parse(TO) / 1000;

let series: CounterSeries[];
let prom: TestPrometheus;
let app: TestApp;

async function api(path: string, params: Record<string, string>): Promise<{ status: number; body: ApiEnvelope<PanelData> }> {
  const res = await fetch(`${app.url}${path}?${new URLSearchParams(params)}`);
  return { status: res.status, body: (await res.json()) as ApiEnvelope<PanelData> };
}

async function panel(id: string, params: Record<string, string>): Promise<PanelData> {
  const { status, body } = await api(`/api/panels/${id}`, params);
  expect(status, JSON.stringify(body)).toBe(200);
  if (body.status !== "success") throw new Error(body.error);
  expect(body.warnings).toEqual([]);
  return body.data;
}

/** Ground-truth rate at an evaluation instant: exact events in (t−w, t] divided by w. */
function truthRate(filter: Parameters<typeof truthTotal>[1], tSeconds: number, windowSeconds: number): number {
  return truthTotal(series, filter, tSeconds - windowSeconds, tSeconds) / windowSeconds;
}

describe.each(METRIC_STORES)("on $name", (store) => {
  beforeAll(async () => {
    series = buildWriteLoadScenario();
    prom = await store.start(series);
    const config = writeConfig(
      [
        `prometheus:`,
        `  url: ${prom.url}`,
        `  scrapeIntervalSeconds: 15`,
        `apiservers:`,
        `  project: [${PROJECT_JOB}, ${LEGACY_JOB}, ${OLD_JOB}]`,
        `  hub: [${JSON.stringify(HUB_JOB)}]`,
      ].join("\n"),
    );
    app = await startApp({ CHURNSCOPE_CONFIG: config });
  });
  afterAll(async () => {
    await app?.stop();
    await prom?.stop();
  });

  describe("JSON API", () => {
    it("downloads as a Grafana dashboard whose queries are the panels' own once its variables hold the view's values", async () => {
      const resource = [...truthByKey(series, writesOf(PROJECT_JOB), (l) => joinResource(l.resource, l.group), FROM_S, TO_S).keys()].find((r) =>
        r.includes("."),
      )!;
      const [plural, group] = splitResource(resource);
      const params = new URLSearchParams({ view: "write-load", from: FROM, to: TO, apiserver: PROJECT_JOB, resource, base: "https://churnscope.example" });
      const res = await fetch(`${app.url}/api/grafana?${params}`);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe("application/json");
      expect(res.headers.get("content-disposition")).toBe('attachment; filename="churnscope-write-load-grafana.json"');
      const dashboard = await res.json();
      expect(dashboard.time).toEqual({ from: new Date(FROM).toISOString(), to: new Date(TO).toISOString() });
      expect(dashboard.templating.list.map((v: { name: string }) => v.name)).toEqual(["datasource", "apiserver", "resource", "group"]);
      expect(dashboard.links[0].url).toBe(
        `https://churnscope.example/?${new URLSearchParams({ apiserver: PROJECT_JOB, resource })}&from=\${__from}&to=\${__to}`,
      );
      let compared = 0;
      for (const shown of dashboard.panels as { title: string; targets: { expr: string }[] }[]) {
        const def = PANELS.find((d) => d.title === shown.title)!;
        if (def.mode === "total") continue;
        const { status, body } = await api(`/api/panels/${def.id}`, { from: FROM, to: TO, apiserver: PROJECT_JOB, resource, step: "60" });
        expect(status, def.id).toBe(200);
        if (body.status !== "success") throw new Error(body.error);
        const window = /\[(\d+s)\]/.exec(body.data.query)?.[1] ?? "60s";
        const filled = shown.targets.map((t) =>
          t.expr
            .replaceAll("($__rate_interval_ms / 1000)", window.slice(0, -1))
            .replaceAll("$__rate_interval", window)
            .replaceAll("$apiserver", PROJECT_JOB)
            .replaceAll("$resource", plural!)
            .replaceAll("$group", group!),
        );
        expect(filled, def.id).toEqual(body.data.queries.map((q) => q.promql));
        compared++;
      }
      expect(compared).toBeGreaterThanOrEqual(8);
    });

    it("says on /readyz which engine it found answering", async () => {
      await panel("writes-by-resource", { from: FROM, to: TO, apiserver: PROJECT_JOB, step: "60" });
      const ready = await (await fetch(`${app.url}/readyz`)).json();
      expect(ready.checks.source).toBe(`prometheus configured: ${store.flavor} (detected)`);
    });

    it("says on a chart of rates how this engine reads their windows and how its rates are asked, and on Thanos what it merged and read", async () => {
      const { body } = await api("/api/panels/writes-by-resource", { from: FROM, to: TO, apiserver: PROJECT_JOB, step: "60" });
      if (body.status !== "success") throw new Error(body.error);
      const leftOpen = body.infos.filter((i) => i.startsWith("This engine reads a window as (t−w, t]"));
      expect(leftOpen).toHaveLength(store.windows === "left-open" ? 1 : 0);
      expect(body.infos.includes("Thanos: replicas deduplicated; raw samples only.")).toBe(store.flavor === "thanos");
      // A total is an exact count on every engine: the window's semantics are not said there.
      const totals = await api("/api/panels/write-totals", { from: FROM, to: TO, apiserver: PROJECT_JOB });
      if (totals.body.status !== "success") throw new Error(totals.body.error);
      expect(totals.body.infos.filter((i) => i.startsWith("This engine reads a window"))).toEqual([]);
    });

    it("writes-by-resource: exact rates, the true top 10, and other = the sum of the rest", async () => {
      const data = await panel("writes-by-resource", { from: FROM, to: TO, apiserver: PROJECT_JOB, step: "60" });
      expect(data.stepSeconds).toBe(60);
      expect(data.query).toContain('verb=~"POST|PUT|PATCH|APPLY|DELETE|DELETECOLLECTION"');
      const window = 60; // max(step, 4 × 15 s scrape)
      const instants = Array.from({ length: (TO_S - FROM_S) / 60 + 1 }, (_, i) => FROM_S + i * 60);

      // Ground truth per resource, ranked by area as the panel promises.
      const resources = [...truthByKey(series, writesOf(PROJECT_JOB), (l) => joinResource(l.resource, l.group), FROM_S, TO_S).keys()];
      const truthSeries = new Map(
        resources.map((r) => [
          r,
          instants.map((t) =>
            truthRate(
              writesOf(PROJECT_JOB, (l) => joinResource(l.resource, l.group) === r),
              t,
              window,
            ),
          ),
        ]),
      );
      const ranked = [...truthSeries.entries()].sort((a, b) => b[1].reduce((x, y) => x + y, 0) - a[1].reduce((x, y) => x + y, 0));
      expect(ranked.length).toBe(15); // more than 10, so "other" holds some

      const named = data.series.filter((s) => s.labels[OTHER_LABEL] === undefined);
      expect(named.map((s) => joinResource(s.labels.resource, s.labels.group))).toEqual(ranked.slice(0, 10).map(([r]) => r));
      for (const s of named) {
        const expected = truthSeries.get(joinResource(s.labels.resource, s.labels.group))!;
        expect(s.points.map((p) => p[0] / 1000)).toEqual(instants);
        s.points.forEach(([, value], i) => expect(value).toBeCloseTo(expected[i], 10));
      }
      const other = data.series.find((s) => s.labels[OTHER_LABEL] !== undefined)!;
      expect(other.labels[OTHER_LABEL]).toBe(String(ranked.length - 10));
      other.points.forEach(([, value], i) =>
        expect(value).toBeCloseTo(
          ranked.slice(10).reduce((sum, [, v]) => sum + v[i], 0),
          10,
        ),
      );
    });

    it("writes-by-verb: one resource split by verb and subresource, exact, reads excluded", async () => {
      const data = await panel("writes-by-verb", { from: FROM, to: TO, apiserver: PROJECT_JOB, resource: "connectors.networking.datumapis.com", step: "300" });
      const keys = data.series.map((s) => `${s.labels.verb} ${s.labels.subresource ?? ""}`.trim()).sort();
      expect(keys).toEqual(["DELETE", "PATCH status", "POST", "PUT", "PUT status"]);
      for (const s of data.series) {
        const filter = writesOf(
          PROJECT_JOB,
          (l) => l.resource === "connectors" && l.verb === s.labels.verb && (l.subresource ?? "") === (s.labels.subresource ?? ""),
        );
        for (const [tsMs, value] of s.points) expect(value).toBeCloseTo(truthRate(filter, tsMs / 1000, 300), 10);
      }
    });

    it("write-totals: exact counts over the range for every resource, verb and subresource", async () => {
      const data = await panel("write-totals", { from: FROM, to: TO, apiserver: PROJECT_JOB });
      const key = (l: Record<string, string>) => [joinResource(l.resource, l.group), l.verb, l.subresource ?? ""].join(" ");
      const truth = truthByKey(series, writesOf(PROJECT_JOB), key, FROM_S, TO_S);
      const got = new Map(data.series.map((s) => [key(s.labels), s.points[0][1]]));
      expect(new Map([...got].sort())).toEqual(new Map([...truth].sort()));
      expect(data.series[0].points[0][0]).toBe(TO_S * 1000);
      // The Connector status PUTs rose ~17× after the 13:12Z onset: check the numbers reflect it.
      expect(got.get("connectors.networking.datumapis.com PUT status")).toBeGreaterThan(500);
    });

    it("compare: each window's count of two counters equals the generator's, and says how it was asked", async () => {
      const a = `apiserver_request_total{job="${PROJECT_JOB}", resource="connectors", verb="PUT", subresource="status"}`;
      const b = `apiserver_request_total{job="${PROJECT_JOB}", resource="leases"}`;
      const { body } = await api("/api/panels/compare", { from: FROM, to: TO, window: "30m", a, b });
      if (body.status !== "success") throw new Error(body.error);
      expect(body.infos[0]).toMatch(store.windows === "left-open" ? /^Counts are each counter's rise over the window/ : /^Counts are increase\(\)/);
      const [sideA, sideB] = body.data.series;
      const truthA = writesOf(PROJECT_JOB, (l) => l.resource === "connectors" && l.verb === "PUT" && l.subresource === "status");
      const truthB = (l: Record<string, string>, name: string) => name === "apiserver_request_total" && l.job === PROJECT_JOB && l.resource === "leases";
      expect(sideA.points).toHaveLength((TO_S - FROM_S) / 1800);
      for (const [tsMs, value] of sideA.points) expect(value).toBe(truthTotal(series, truthA, tsMs / 1000 - 1800, tsMs / 1000));
      for (const [tsMs, value] of sideB.points) expect(value).toBe(truthTotal(series, truthB, tsMs / 1000 - 1800, tsMs / 1000));
    });

    it("write-totals across every API server keeps the job apart", async () => {
      const data = await panel("write-totals", { from: FROM, to: TO, resource: "connectors" });
      const byJob = new Map<string, number>();
      for (const s of data.series) byJob.set(s.labels.job, (byJob.get(s.labels.job) ?? 0) + (s.points[0][1] ?? 0));
      expect(byJob.get(PROJECT_JOB)).toBe(
        truthTotal(
          series,
          writesOf(PROJECT_JOB, (l) => l.resource === "connectors"),
          FROM_S,
          TO_S,
        ),
      );
      expect(byJob.get(HUB_JOB)).toBe(
        truthTotal(
          series,
          writesOf(HUB_JOB, (l) => l.resource === "connectors"),
          FROM_S,
          TO_S,
        ),
      );
    });

    it("write-errors and effective-writes are exact too; the no-op estimate says it is one", async () => {
      const errors = await panel("write-errors", { from: FROM, to: TO, apiserver: PROJECT_JOB, step: "600" });
      expect(errors.series.map((s) => s.labels.code)).toEqual(["409"]);
      for (const [tsMs, value] of errors.series[0].points) {
        expect(value).toBeCloseTo(
          truthRate(
            writesOf(PROJECT_JOB, (l) => l.code === "409"),
            tsMs / 1000,
            600,
          ),
          10,
        );
      }
      const effective = await panel("effective-writes", { from: FROM, to: TO, apiserver: PROJECT_JOB, resource: "connectors", step: "600" });
      expect(effective.estimate).toMatch(/estimate/);
      const [apiWrites, etcd] = effective.series;
      expect(apiWrites.labels.series).toBe("API writes (2xx)");
      expect(etcd.labels.series).toBe("effective writes (etcd)");
      for (const [tsMs, value] of apiWrites.points) {
        expect(value).toBeCloseTo(
          truthRate(
            writesOf(PROJECT_JOB, (l) => l.resource === "connectors" && l.code.startsWith("2")),
            tsMs / 1000,
            600,
          ),
          10,
        );
      }
      const etcdFilter = (l: Record<string, string>, name: string) => name === "etcd_requests_total" && l.job === PROJECT_JOB && l.resource === "connectors";
      for (const [tsMs, value] of etcd.points) expect(value).toBeCloseTo(truthRate(etcdFilter, tsMs / 1000, 600), 10);
    });

    it("leaves reviews and TokenRequests, which store nothing, out of the API writes a no-op estimate compares with storage", async () => {
      const whole = await panel("effective-writes", { from: FROM, to: TO, apiserver: PROJECT_JOB, step: "600" });
      const apiWrites = whole.series.find((s) => s.labels.series === "API writes (2xx)")!;
      const stored = writesOf(PROJECT_JOB, (l) => l.code.startsWith("2") && l.resource !== "subjectaccessreviews" && l.subresource !== "token");
      const all = writesOf(PROJECT_JOB, (l) => l.code.startsWith("2"));
      expect(apiWrites.points.length).toBeGreaterThan(20);
      for (const [tsMs, value] of apiWrites.points) {
        expect(value).toBeCloseTo(truthRate(stored, tsMs / 1000, 600), 10);
        expect(truthRate(all, tsMs / 1000, 600) - value!).toBeGreaterThan(0.03);
      }
      // They are still write requests: the write rates count them.
      const byResource = await panel("writes-by-resource", { from: FROM, to: TO, apiserver: PROJECT_JOB, step: "600" });
      expect(byResource.series.map((s) => s.labels.resource)).toContain("subjectaccessreviews");
    });

    it("probes the Kubernetes ≤ 1.33 label set and still gives exact effective writes", async () => {
      const effective = await panel("effective-writes", {
        from: FROM,
        to: TO,
        apiserver: LEGACY_JOB,
        resource: "connectors.networking.datumapis.com",
        step: "600",
      });
      expect(effective.queries[1].promql).toContain('type="connectors.networking.datumapis.com"');
      const etcdFilter = (l: Record<string, string>, name: string) =>
        name === "etcd_requests_total" && l.job === LEGACY_JOB && l.type === "connectors.networking.datumapis.com";
      expect(effective.series[1].points.length).toBeGreaterThan(20);
      for (const [tsMs, value] of effective.series[1].points) expect(value).toBeCloseTo(truthRate(etcdFilter, tsMs / 1000, 600), 10);

      const { body } = await api("/api/panels/watch-fanout", { from: FROM, to: TO, apiserver: LEGACY_JOB, resource: "connectors", step: "600" });
      expect(body.status).toBe("success");
      if (body.status !== "success") return;
      expect(body.data.series.map((s) => s.labels.kind).sort()).toEqual(["Connector", "Lease"]);
      expect(body.infos[0]).toMatch(/labels watch events by kind/);
    });

    it("counts effective writes on Kubernetes ≤ 1.27 from etcd_request_duration_seconds_count, exactly, and says so", async () => {
      const params = { from: FROM, to: TO, apiserver: OLD_JOB, resource: "connectors.networking.datumapis.com", step: "600" };
      const effective = await panel("effective-writes", params);
      expect(effective.queries[1].promql).toMatch(
        /^sum\(.*etcd_request_duration_seconds_count\{job="apiserver-1-26", type="connectors.networking.datumapis.com"/,
      );
      const { body } = await api("/api/panels/effective-writes", params);
      expect(body.status === "success" && body.infos.join(" ")).toMatch(/Kubernetes ≤ 1.27.*etcd_request_duration_seconds_count/);
      const etcdFilter = (l: Record<string, string>, name: string) =>
        name === "etcd_request_duration_seconds_count" && l.job === OLD_JOB && l.type === "connectors.networking.datumapis.com";
      expect(effective.series[1].points.length).toBeGreaterThan(20);
      for (const [tsMs, value] of effective.series[1].points) expect(value).toBeCloseTo(truthRate(etcdFilter, tsMs / 1000, 600), 10);
    });

    it("lists the configured API servers with their roles", async () => {
      const res = await fetch(`${app.url}/api/apiservers?from=${FROM}&to=${TO}`);
      const body = (await res.json()) as ApiEnvelope<{ job: string; role: string }[]>;
      expect(body.status === "success" && body.data).toEqual([
        { job: PROJECT_JOB, role: "project" },
        { job: LEGACY_JOB, role: "project" },
        { job: OLD_JOB, role: "project" },
        { job: HUB_JOB, role: "hub" },
      ]);
    });

    it("answers bad parameters with 4xx and a message, never a 500", async () => {
      const cases: [string, Record<string, string>, number, RegExp][] = [
        ["/api/panels/no-such-panel", {}, 404, /unknown panel/],
        ["/api/panels/writes-by-resource", { from: "yesterday" }, 400, /parameter from/],
        ["/api/panels/writes-by-resource", { from: "2000-01-01T00:00:00Z", to: TO }, 400, /days are allowed/],
        ["/api/panels/writes-by-resource", { from: TO, to: FROM }, 400, /later than/],
        ["/api/panels/writes-by-verb", { from: FROM, to: TO }, 400, /add the parameter resource/],
        ["/api/panels/writes-by-resource", { apiserver: 'x"} or vector(1)' }, 400, /not a configured API server/],
        ["/api/panels/writes-by-verb", { resource: 'connectors"} or up{a="' }, 400, /parameter resource/],
        ["/api/panels/writes-by-resource", { step: "-5s" }, 400, /parameter step/],
        ["/api/panels/writes-by-resource", { width: "abc" }, 400, /parameter width/],
      ];
      for (const [path, params, status, pattern] of cases) {
        const { status: got, body } = await api(path, params);
        expect(got, `${path} ${JSON.stringify(params)}`).toBe(status);
        expect(body.status).toBe("error");
        if (body.status === "error") expect(body.error).toMatch(pattern);
      }
    });
  });
});

describe("JSON API when Prometheus fails", () => {
  it("answers 504 for a Prometheus that does not answer in time and 502 when it is unreachable", async () => {
    const { createServer } = await import("node:net");
    const sockets = new Set<import("node:net").Socket>();
    const silent = createServer((socket) => sockets.add(socket)); // accepts, never answers
    await new Promise<void>((r) => silent.listen(0, "127.0.0.1", r));
    const port = (silent.address() as import("node:net").AddressInfo).port;
    const broken = await startApp({ CHURNSCOPE_CONFIG: writeConfig(`prometheus:\n  url: http://127.0.0.1:${port}\n  timeoutSeconds: 1\n`) });
    try {
      const slow = await fetch(`${broken.url}/api/panels/writes-by-resource?from=${FROM}&to=${TO}`);
      expect(slow.status).toBe(504);
      expect(await slow.json()).toMatchObject({ status: "error", errorType: "timeout" });
      for (const s of sockets) s.destroy();
      await new Promise<void>((r) => silent.close(() => r()));
      const down = await fetch(`${broken.url}/api/panels/writes-by-resource?from=${FROM}&to=${TO}`);
      expect(down.status).toBe(502);
      const body = await down.json();
      expect(body).toMatchObject({ status: "error", errorType: "unreachable" });
      expect(body.error).toMatch(/ECONNREFUSED/);
      expect(body.error).not.toContain(String(port)); // the datasource address stays on the server
      // The page itself still renders while Prometheus is down.
      expect((await fetch(`${broken.url}/`)).status).toBe(200);
    } finally {
      await broken.stop();
    }
  });
});
