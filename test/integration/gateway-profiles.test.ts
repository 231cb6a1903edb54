/**
 * The gateway profiles beyond Envoy Gateway, each on its own real Prometheus: kgateway, NGINX
 * Gateway Fabric 2.x (a histogram in milliseconds), Istio (stages and push triggers) and Contour
 * (summaries: means, never quantiles). Every expected value is counted from the rebuilds the test
 * generated, never from Prometheus.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PanelData } from "@/lib/panels/run-panel";
import { createRng } from "@/lib/scenario/rng";
import { SeriesBuilder } from "@/lib/scenario/series-builder";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { startPrometheus, type TestPrometheus } from "../helpers/prometheus";

const START = Date.parse("2026-10-02T08:00:00Z") / 1000;
const END = START + 2 * 3600;
const GRID = { startSeconds: START, endSeconds: END, intervalSeconds: 15 };
const FROM = (START + 1800) * 1000;
const TO = (START + 5400) * 1000;
const STEP = 60;
const INSTANTS = Array.from({ length: (TO - FROM) / 1000 / STEP + 1 }, (_, i) => FROM / 1000 + i * STEP);
const SITES = ["edge-fra1", "edge-nyc1"];

interface Rebuild {
  site: string;
  /** end of the rebuild, whole seconds */
  t: number;
  ms: number;
  /** the stage timings of this rebuild, by stage name */
  stages: Record<string, number>;
  /** what the gateway says it was or what set it off */
  type: string;
}

interface Gateway {
  id: string;
  stages: string[];
  types: string[];
  /** writes one rebuild into the series as the gateway exports it */
  emit(b: SeriesBuilder, r: Rebuild): void;
}

const GATEWAYS: Gateway[] = [
  {
    id: "kgateway",
    stages: ["translation", "xDS snapshot sync"],
    types: ["TranslateGateway", "TranslateHTTPRoute"],
    emit: (b, r) => {
      const gw = { cluster: r.site, gateway: "gw1", namespace: "default" };
      b.count("kgateway_xds_snapshot_syncs_total", gw, r.t);
      b.observe("kgateway_xds_snapshot_sync_duration_seconds", gw, [0.01, 0.1, 1, 5, 10, 30], r.t, r.stages["xDS snapshot sync"]);
      b.count("kgateway_translator_translations_total", { cluster: r.site, translator: r.type, result: "success" }, r.t);
      b.observe("kgateway_translator_translation_duration_seconds", { cluster: r.site, translator: r.type }, [0.01, 0.1, 1, 5, 10], r.t, r.stages.translation);
    },
  },
  {
    id: "nginx-gateway-fabric",
    stages: [],
    types: [],
    emit: (b, r) =>
      b.observeValue(
        "nginx_gateway_fabric_event_batch_processing_milliseconds",
        { cluster: r.site, class: "nginx" },
        [500, 1000, 5000, 10000, 30000],
        r.t,
        r.ms,
      ),
  },
  {
    id: "istio",
    stages: ["debounce", "proxy queue", "xDS push"],
    types: ["endpoint", "config", "service"],
    emit: (b, r) => {
      b.count("pilot_xds_pushes", { cluster: r.site, type: "cds" }, r.t);
      b.count("pilot_push_triggers", { cluster: r.site, type: r.type }, r.t);
      b.observe("pilot_proxy_convergence_time", { cluster: r.site }, [0.1, 0.5, 1, 3, 5, 10, 20, 30], r.t, r.ms);
      b.observe("pilot_debounce_time", { cluster: r.site }, [0.01, 0.1, 1, 3, 5, 10, 20, 30], r.t, r.stages.debounce);
      b.observe("pilot_proxy_queue_time", { cluster: r.site }, [0.1, 0.5, 1, 3, 5, 10, 20, 30], r.t, r.stages["proxy queue"]);
      b.observe("pilot_xds_push_time", { cluster: r.site, type: "cds" }, [0.01, 0.1, 1, 3, 5], r.t, r.stages["xDS push"]);
    },
  },
  {
    id: "contour",
    stages: ["DAG rebuild", "cache handler update"],
    types: [],
    emit: (b, r) => {
      b.count("contour_dagrebuild_total", { cluster: r.site }, r.t);
      b.observeSummary("contour_dagrebuild_seconds", { cluster: r.site }, r.t, r.stages["DAG rebuild"]);
      b.observeSummary("contour_cachehandler_onupdate_duration_seconds", { cluster: r.site }, r.t, r.stages["cache handler update"]);
    },
  },
];

function rebuildsOf(g: Gateway, seed: number): Rebuild[] {
  const rng = createRng(seed);
  const out: Rebuild[] = [];
  for (const site of SITES) {
    for (let t = START + 7; t < END; t += 5 + Math.floor(rng() * 40)) {
      const ms = 200 + Math.floor(rng() * 14_000);
      const stages = Object.fromEntries(g.stages.map((name) => [name, 1 + Math.floor(rng() * 3000)]));
      if (g.id === "contour") stages["DAG rebuild"] = ms;
      if (g.id === "kgateway") stages["xDS snapshot sync"] = ms;
      out.push({ site, t, ms, stages, type: g.types.length ? g.types[Math.floor(rng() * g.types.length)] : "" });
    }
  }
  return out;
}

const running: { prom: TestPrometheus; app: TestApp }[] = [];
const apps = new Map<string, { app: TestApp; rebuilds: Rebuild[] }>();

beforeAll(async () => {
  for (const [i, g] of GATEWAYS.entries()) {
    const rebuilds = rebuildsOf(g, 7000 + i);
    const b = new SeriesBuilder(GRID);
    for (const r of rebuilds) g.emit(b, r);
    const prom = await startPrometheus(b.build());
    const app = await startApp({ CHURNSCOPE_CONFIG: writeConfig(`prometheus:\n  url: ${prom.url}\n  scrapeIntervalSeconds: 15\n`) });
    running.push({ prom, app });
    apps.set(g.id, { app, rebuilds });
  }
}, 240_000);
afterAll(async () => {
  await Promise.all(running.flatMap(({ prom, app }) => [app.stop(), prom.stop()]));
});

async function panel(gateway: string, id: string): Promise<{ data: PanelData; warnings: string[]; infos: string[] }> {
  const res = await fetch(`${apps.get(gateway)!.app.url}/api/panels/${id}?from=${FROM}&to=${TO}&step=${STEP}`);
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body;
}

const within = (rebuilds: Rebuild[], site: string, t: number) => rebuilds.filter((r) => r.site === site && r.t > t - STEP && r.t <= t);
const mean = (values: number[]) => (values.length === 0 ? null : values.reduce((a, b) => a + b, 0) / values.length);

function expectSeries(data: PanelData, match: Record<string, string>, truth: (t: number) => number | null) {
  const found = data.series.filter((s) => Object.entries(match).every(([k, v]) => s.labels[k] === v));
  expect(found, `${data.panel} ${JSON.stringify(match)} in ${JSON.stringify(data.series.map((s) => s.labels))}`).toHaveLength(1);
  const values = new Map(found[0].points.map(([tsMs, v]) => [tsMs / 1000, v]));
  for (const t of INSTANTS) {
    const want = truth(t);
    if (want === null) expect(values.get(t) ?? null, `${data.panel} at ${t}`).toBeNull();
    else expect(values.get(t), `${data.panel} ${JSON.stringify(match)} at ${new Date(t * 1000).toISOString()}`).toBeCloseTo(want, 9);
  }
}

describe("gateway profiles on a real Prometheus", () => {
  for (const g of GATEWAYS) {
    it(`${g.id}: detected, with rebuilds per hour and the exact mean duration at every point`, async () => {
      const { rebuilds } = apps.get(g.id)!;
      const rate = await panel(g.id, "rebuild-rate");
      expect(rate.data.profile?.id).toBe(g.id);
      const meanPanel = await panel(g.id, "rebuild-duration-mean");
      for (const site of SITES) {
        expectSeries(rate.data, { cluster: site }, (t) => (within(rebuilds, site, t).length / STEP) * 3600);
        expectSeries(meanPanel.data, { cluster: site }, (t) => {
          const m = mean(within(rebuilds, site, t).map((r) => r.ms));
          return m === null ? null : m / 1000;
        });
      }
    });
  }

  it("NGINX Gateway Fabric: a histogram in milliseconds gives slow shares over 5 s and 10 s and quantiles in seconds", async () => {
    const { rebuilds } = apps.get("nginx-gateway-fabric")!;
    const slow = await panel("nginx-gateway-fabric", "rebuild-slow-share");
    for (const site of SITES) {
      for (const bound of [5, 10]) {
        expectSeries(slow.data, { cluster: site, series: `over ${bound} s` }, (t) => {
          const w = within(rebuilds, site, t);
          return w.length === 0 ? null : (100 * w.filter((r) => r.ms > bound * 1000).length) / w.length;
        });
      }
    }
    const quantiles = await panel("nginx-gateway-fabric", "rebuild-duration-quantiles");
    expect(quantiles.data.thresholds).toEqual([{ value: 30, label: "top bucket: ≥ 30 s" }]);
    const p50 = quantiles.data.series.find((s) => s.labels.series === "p50" && s.labels.cluster === SITES[0])!;
    const values = p50.points.map(([, v]) => v).filter((v): v is number => v !== null);
    // Interpolated inside the 0.5 s–30 s buckets, in seconds (a value in milliseconds would be in the thousands).
    expect(Math.max(...values)).toBeLessThanOrEqual(30);
    expect(Math.min(...values)).toBeGreaterThan(0.1);
  });

  for (const g of GATEWAYS.filter((x) => x.stages.length > 0)) {
    it(`${g.id}: each stage's exact mean`, async () => {
      const { rebuilds } = apps.get(g.id)!;
      const { data } = await panel(g.id, "rebuild-stages");
      for (const site of SITES) {
        for (const stage of g.stages) {
          expectSeries(data, { cluster: site, series: stage }, (t) => {
            const m = mean(within(rebuilds, site, t).map((r) => r.stages[stage]));
            return m === null ? null : m / 1000;
          });
        }
      }
    });
  }

  it("Istio and kgateway split their rebuilds by their own label, per hour", async () => {
    for (const [id, name, label] of [
      ["istio", "push triggers", "type"],
      ["kgateway", "translations", "translator"],
    ] as const) {
      const g = GATEWAYS.find((x) => x.id === id)!;
      const { rebuilds } = apps.get(id)!;
      const { data } = await panel(id, "rebuild-breakdown");
      for (const site of SITES) {
        for (const type of g.types) {
          expectSeries(
            data,
            { cluster: site, series: name, [label]: type, part: type },
            (t) => (within(rebuilds, site, t).filter((r) => r.type === type).length / STEP) * 3600,
          );
        }
      }
    }
  });

  it("Contour's summaries give means, and no quantile or slow share is drawn from them", async () => {
    for (const id of ["rebuild-duration-quantiles", "rebuild-slow-share"]) {
      const { data, infos } = await panel("contour", id);
      expect(data.queries).toEqual([]);
      expect(data.series).toEqual([]);
      expect(data.nothingToDraw).toBe(true);
      expect(infos.join(" "), id).toMatch(/summary|no buckets/);
    }
    const summary = await panel("contour", "rebuild-summary");
    expect(summary.data.queries.map((q) => q.name)).toEqual(["rebuilds", "mean s", "busy s/s"]);
    expect(summary.data.nothingToDraw).toBeUndefined();
  });

  it("a gateway without stages or a split says so in one line instead of an empty chart", async () => {
    for (const id of ["rebuild-stages", "rebuild-breakdown"]) {
      const { data, infos } = await panel("nginx-gateway-fabric", id);
      expect(data.queries).toEqual([]);
      expect(data.nothingToDraw).toBe(true);
      expect(infos[0]).toMatch(/NGINX Gateway Fabric 2\.x \(event batches\) (times no stage|does not split)/);
    }
  });
});
