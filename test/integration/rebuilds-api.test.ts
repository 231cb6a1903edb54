/**
 * The Edge rebuilds panels through the JSON API against a real Prometheus holding a six-hour cut
 * of the replay: rates, exact means, slow shares, busy time, amplification, propagation and the
 * summaries equal the generator's rebuilds, and the top-bucket warning appears exactly where a
 * quantile can only say "10 s or more".
 */
import { REBUILD_PANELS } from "@/lib/rebuilds/catalog";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EDGE_ROUTES, replaySeries, translationMs } from "@/lib/demo/metrics";
import { DEFAULT_REPLAY, type ReplayParams } from "@/lib/demo/params";
import { generateReplay, type Replay } from "@/lib/demo/replay";
import { HUB_JOB, PROJECT_JOB } from "@/lib/demo/types";
import type { PanelData } from "@/lib/panels/run-panel";
import type { Series } from "@/lib/promql/types";
import { capWarnings } from "@/lib/rebuilds/run";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { METRIC_STORES } from "../helpers/metric-stores";
import type { TestPrometheus } from "../helpers/prometheus";

const at = (iso: string) => Date.parse(iso);
const PARAMS: ReplayParams = {
  ...DEFAULT_REPLAY,
  startMs: at("2026-09-11T10:00:00Z"),
  endMs: at("2026-09-11T16:00:00Z"),
  sites: ["edge-ams1", "edge-sin1"],
  connectors: 30,
  projects: 4,
};
const FROM = at("2026-09-11T12:00:00Z");
const TO = at("2026-09-11T16:00:00Z");

let replay: Replay;
let prom: TestPrometheus;
let app: TestApp;

async function panel(id: string, fromMs = FROM, toMs = TO): Promise<{ data: PanelData; warnings: string[]; infos: string[] }> {
  const res = await fetch(`${app.url}/api/panels/${id}?from=${fromMs}&to=${toMs}&width=1000`);
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

const windowOf = (data: PanelData) => Number(/\[(\d+)s\]/.exec(data.query)![1]);
/** Rebuilds that finished in (fromMs, toMs] at a site: a counter counts a rebuild when it ends. */
const finished = (site: string, fromMs: number, toMs: number) =>
  replay.sink.rebuilds.filter((r) => r.site === site && r.startMs + r.durationMs > fromMs && r.startMs + r.durationMs <= toMs);
const hubWrites = (fromMs: number, toMs: number) =>
  replay.sink.requests.filter((q) => q.job === HUB_JOB && q.resource === "connectors" && q.code < 300 && q.timeMs > fromMs && q.timeMs <= toMs).length;

/** Checks every point of every site's series against a truth computed for its window. */
function eachPoint(data: PanelData, name: string | undefined, truth: (site: string, fromMs: number, toMs: number) => number | null) {
  const w = windowOf(data) * 1000;
  let checked = 0;
  for (const s of data.series.filter((x) => name === undefined || x.labels.series === name)) {
    for (const [t, value] of s.points) {
      const expected = truth(s.labels.cluster, t - w, t);
      if (expected === null) {
        expect(value).toBeNull();
        continue;
      }
      expect(value, `${s.labels.cluster} at ${new Date(t).toISOString()}`).toBeCloseTo(expected, 6);
      checked++;
    }
  }
  expect(checked).toBeGreaterThan(100);
}

describe.each(METRIC_STORES)("on $name", (store) => {
  beforeAll(async () => {
    replay = generateReplay(PARAMS);
    prom = await store.start(replaySeries(replay));
    app = await startApp({
      CHURNSCOPE_CONFIG: writeConfig(
        `prometheus:\n  url: ${prom.url}\n  scrapeIntervalSeconds: 30\napiservers:\n  project: [${PROJECT_JOB}]\n  hub: [${JSON.stringify(HUB_JOB)}]\n`,
      ),
    });
  }, 120_000);
  afterAll(async () => {
    await app?.stop();
    await prom?.stop();
  });

  describe("Edge rebuilds panels against the generator", () => {
    it("download as a Grafana dashboard whose queries are the panels' own once its variables hold the view's values", async () => {
      const res = await fetch(`${app.url}/api/grafana?${new URLSearchParams({ view: "rebuilds", from: String(FROM), to: String(TO) })}`);
      expect(res.status).toBe(200);
      const dashboard = await res.json();
      expect(dashboard.links[0].url).toBe("http://localhost:3000/rebuilds?from=${__from}&to=${__to}");
      let compared = 0;
      for (const shown of dashboard.panels as { title: string; targets: { expr: string }[] }[]) {
        const def = REBUILD_PANELS.find((d) => d.title === shown.title)!;
        if (def.mode === "total") continue;
        const { data } = await panel(def.id);
        const window = /\[(\d+s)\]/.exec(data.query)?.[1] ?? "";
        expect(
          shown.targets.map((t) => t.expr.replaceAll("($__rate_interval_ms / 1000)", window.slice(0, -1)).replaceAll("$__rate_interval", window)),
          def.id,
        ).toEqual(data.queries.map((q) => q.promql));
        compared++;
      }
      expect(compared).toBeGreaterThanOrEqual(4);
    });

    it("say which profile they use and why", async () => {
      const { data } = await panel("rebuild-rate");
      expect(data.profile).toMatchObject({ id: "envoy-gateway", title: "Envoy Gateway ≥ 1.5 (xds runner)" });
      expect(data.profile?.reason).toMatch(/^watchable_subscribe_total\{runner="xds", message="xds-ir", status="success"\} has data in this range$/);
    });

    it("rebuilds per hour, exact mean duration, slow shares and busy time equal the generator at every point", async () => {
      eachPoint((await panel("rebuild-rate")).data, undefined, (site, a, b) => (finished(site, a, b).length / ((b - a) / 1000)) * 3600);
      eachPoint((await panel("rebuild-duration-mean")).data, undefined, (site, a, b) => {
        const done = finished(site, a, b);
        return done.length ? done.reduce((s, r) => s + r.durationMs, 0) / done.length / 1000 : null;
      });
      const slow = (await panel("rebuild-slow-share")).data;
      for (const [name, limitMs] of [
        ["over 5 s", 5_000],
        ["over 10 s", 10_000],
      ] as const) {
        eachPoint(slow, name, (site, a, b) => {
          const done = finished(site, a, b);
          return done.length ? (100 * done.filter((r) => r.durationMs > limitMs).length) / done.length : null;
        });
      }
      eachPoint((await panel("rebuild-busy")).data, undefined, (site, a, b) => finished(site, a, b).reduce((s, r) => s + r.durationMs, 0) / (b - a));
    });

    it("Envoy Gateway's two timed stages, and the status updates it skipped, equal the generator", async () => {
      const stages = (await panel("rebuild-stages")).data;
      eachPoint(stages, "xDS translation", (site, a, b) => {
        const done = finished(site, a, b);
        return done.length ? done.reduce((s, r) => s + r.durationMs, 0) / done.length / 1000 : null;
      });
      // The gateway-api runner's translation ends when the xDS rebuild starts.
      eachPoint(stages, "Gateway API translation", (site, a, b) => {
        const started = replay.sink.rebuilds.filter((r) => r.site === site && r.startMs > a && r.startMs <= b);
        return started.length ? started.reduce((s, r) => s + translationMs(r.durationMs), 0) / started.length / 1000 : null;
      });
      const res = await fetch(`${app.url}/api/panels/noop-evidence?from=${FROM}&to=${TO}&width=1000`);
      const noop = (await res.json()).data as PanelData;
      const skipped = noop.series.find((s) => s.labels.series === "Envoy Gateway: status updates with no action")!;
      const w = windowOf(noop) * 1000;
      for (const [t, value] of skipped.points) {
        const rebuilt = replay.sink.rebuilds.filter((r) => r.startMs + r.durationMs > t - w && r.startMs + r.durationMs <= t).length;
        expect(value, new Date(t).toISOString()).toBeCloseTo((rebuilt * EDGE_ROUTES) / (w / 1000), 6);
      }
      expect(skipped.points.length).toBeGreaterThan(100);
    });

    it("rebuilds per upstream hub write, and Karmada's propagated updates, equal the generator", async () => {
      eachPoint((await panel("rebuild-amplification")).data, undefined, (site, a, b) => {
        const writes = hubWrites(a, b);
        return writes ? finished(site, a, b).length / writes : null;
      });
      const propagation = (await panel("propagation")).data;
      const w = windowOf(propagation) * 1000;
      for (const s of propagation.series) {
        for (const [t, value] of s.points) {
          const n = replay.sink.propagations.filter(
            (p) =>
              p.site === s.labels.member_cluster &&
              p.kind === s.labels.kind &&
              p.operationResult === s.labels.operationResult &&
              p.timeMs > t - w &&
              p.timeMs <= t,
          ).length;
          expect(value).toBeCloseTo((n / (w / 1000)) * 3600, 6);
        }
      }
      expect(new Set(propagation.series.map((s) => s.labels.operationResult))).toEqual(new Set(["updated", "unchanged"]));
    });

    it("warns about the top bucket exactly where a quantile reaches it: after the onset, not before", async () => {
      const expectedWarnings = (data: PanelData) => {
        const w = windowOf(data) * 1000;
        const truthSeries: Series[] = data.series.map((s) => {
          const q = Number(s.labels.series.slice(1)) / 100;
          return {
            labels: s.labels,
            points: s.points.map(([t]) => {
              const done = finished(s.labels.cluster, t - w, t);
              const within = done.filter((r) => r.durationMs <= 10_000).length;
              return [t, done.length > 0 && within < q * done.length ? 10 : 0] as [number, number];
            }),
          };
        });
        return capWarnings(truthSeries, 10, "cluster");
      };
      const after = await panel("rebuild-duration-quantiles", at("2026-09-11T13:30:00Z"), TO);
      expect(after.warnings.length).toBe(3);
      expect(after.warnings).toEqual(expectedWarnings(after.data));
      expect(after.data.thresholds).toEqual([{ value: 10, label: "top bucket: ≥ 10 s" }]);
      const before = await panel("rebuild-duration-quantiles", at("2026-09-11T10:00:00Z"), at("2026-09-11T13:00:00Z"));
      expect(before.data.series.length).toBeGreaterThan(0);
      expect(before.warnings).toEqual([]);
      expect(expectedWarnings(before.data)).toEqual([]);
    });

    it("summaries per site for the range and before/after the onset equal the generator", async () => {
      for (const [fromMs, toMs] of [
        [FROM, TO],
        [FROM, replay.params.onsetMs],
        [replay.params.onsetMs, TO],
      ]) {
        const { data } = await panel("rebuild-summary", fromMs, toMs);
        for (const site of PARAMS.sites) {
          const done = finished(site, fromMs, toMs);
          const value = (name: string) => data.series.find((s) => s.labels.series === name && s.labels.cluster === site)!.points[0][1];
          const total = done.reduce((s, r) => s + r.durationMs, 0);
          expect(value("rebuilds")).toBeCloseTo(done.length, 6);
          expect(value("mean s")).toBeCloseTo(total / done.length / 1000, 6);
          expect(value("busy s/s")).toBeCloseTo(total / (toMs - fromMs), 6);
          expect(value("over 10 s %")).toBeCloseTo((100 * done.filter((r) => r.durationMs > 10_000).length) / done.length, 6);
        }
      }
    });
  });
});
