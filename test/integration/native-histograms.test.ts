/**
 * Native histograms, scraped for real: a Prometheus with native histograms enabled scrapes a target
 * that exposes the API server's histograms only in native form (no _sum, _count or _bucket series),
 * and the panels' means come out as the one value every observation had.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { servePrometheus } from "@/lib/cli/backfilled-prometheus";
import type { PanelData } from "@/lib/panels/run-panel";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { serveNativeHistograms } from "../helpers/native-histograms";
import type { TestPrometheus } from "../helpers/prometheus";

const JOB = "native-apiserver";
const BODY_BYTES = 3000;
const WATCHERS = 5;
/** Istio's convergence time in seconds: schema 0 puts it in the bucket (2, 4]. */
const CONVERGENCE_SECONDS = 3;

let target: Awaited<ReturnType<typeof serveNativeHistograms>>;
let prom: TestPrometheus;
let app: TestApp;

async function promQuery(query: string): Promise<unknown[]> {
  const res = await fetch(`${prom.url}/api/v1/query?${new URLSearchParams({ query })}`);
  return ((await res.json()) as { data: { result: unknown[] } }).data.result;
}

beforeAll(async () => {
  target = await serveNativeHistograms(
    [
      {
        name: "apiserver_request_body_size_bytes",
        labels: { group: "networking.datumapis.com", resource: "connectors", verb: "update" },
        value: BODY_BYTES,
        count: 0,
      },
      {
        name: "apiserver_flowcontrol_watch_count_samples",
        labels: { flow_schema: "service-accounts", priority_level: "workload-low" },
        value: WATCHERS,
        count: 0,
      },
      { name: "pilot_proxy_convergence_time", labels: { cluster: "edge-native1" }, value: CONVERGENCE_SECONDS, count: 0 },
    ],
    7,
    [{ name: "pilot_xds_pushes", of: "pilot_proxy_convergence_time" }],
  );
  const config = {
    global: { scrape_interval: "1s", scrape_timeout: "1s" },
    scrape_configs: [{ job_name: JOB, static_configs: [{ targets: [new URL(target.url).host] }] }],
  };
  prom = await servePrometheus(mkdtempSync(join(tmpdir(), "churnscope-prom-native-")), JSON.stringify(config), ["--enable-feature=native-histograms"]);
  // Enough scrapes for a 4 s rate window at every step of the last 10 s.
  const deadline = Date.now() + 60_000;
  while (Number((((await promQuery(`count_over_time(up{job="${JOB}"}[1m])`))[0] as { value?: [number, string] })?.value ?? [0, "0"])[1]) < 16) {
    if (Date.now() > deadline) throw new Error("Prometheus did not scrape the native-histogram target 16 times within 60 s");
    await new Promise((r) => setTimeout(r, 500));
  }
  app = await startApp({
    CHURNSCOPE_CONFIG: writeConfig([`prometheus:`, `  url: ${prom.url}`, `  scrapeIntervalSeconds: 1`, `apiservers:`, `  project: [${JOB}]`].join("\n")),
  });
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await prom?.stop();
  target?.server.close();
});

async function panel(id: string): Promise<PanelData> {
  const res = await fetch(`${app.url}/api/panels/${id}?from=now-10s&to=now&step=1&apiserver=${JOB}`);
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.data as PanelData;
}

describe("native histograms on a real Prometheus", () => {
  it("are stored as native series only: no classic _sum or _count to read", async () => {
    expect(await promQuery("apiserver_request_body_size_bytes_count")).toEqual([]);
    expect(await promQuery("apiserver_request_body_size_bytes_sum")).toEqual([]);
    expect(await promQuery(`histogram_count(apiserver_request_body_size_bytes{job="${JOB}"})`)).toHaveLength(1);
  });

  it("give Istio's exact mean convergence time, and quantiles inside the native bucket that holds it", async () => {
    const mean = await panel("rebuild-duration-mean");
    expect(mean.profile?.id).toBe("istio");
    const means = mean.series[0].points.map(([, v]) => v).filter((v): v is number => v !== null);
    expect(means.length).toBeGreaterThan(5);
    for (const v of means) expect(v).toBeCloseTo(CONVERGENCE_SECONDS, 9);
    const quantiles = await panel("rebuild-duration-quantiles");
    const p50 = quantiles.series.find((s) => s.labels.series === "p50")!;
    const values = p50.points.map(([, v]) => v).filter((v): v is number => v !== null);
    expect(values.length).toBeGreaterThan(5);
    for (const v of values) {
      expect(v).toBeGreaterThan(2);
      expect(v).toBeLessThanOrEqual(4);
    }
  });

  it("give Istio's time spent rebuilding, its slow shares (labelled estimates) and its summary from the native form", async () => {
    // Every observation is 3 s: seconds spent per second are 3 × the observations per second (the counter beside it).
    const [busy, perHour] = [await panel("rebuild-busy"), await panel("rebuild-rate")];
    const rebuildsPerHour = new Map(perHour.series[0].points.map(([t, v]) => [t, v]));
    const busyPoints = busy.series[0].points.filter(([t, v]) => v !== null && rebuildsPerHour.get(t) != null);
    expect(busyPoints.length).toBeGreaterThan(5);
    for (const [t, v] of busyPoints) expect(v).toBeCloseTo((CONVERGENCE_SECONDS * rebuildsPerHour.get(t)!) / 3600, 9);
    // None is slower than 5 s: the native bucket (2, 4] holds them all, so the interpolation has nothing to split.
    const res = await fetch(`${app.url}/api/panels/rebuild-slow-share?from=now-10s&to=now&step=1&apiserver=${JOB}`);
    const slow = (await res.json()) as { data: PanelData; infos: string[] };
    expect(slow.data.series.map((s) => s.labels.series).sort()).toEqual(["over 10 s", "over 5 s"]);
    for (const s of slow.data.series) {
      const values = s.points.map(([, v]) => v).filter((v): v is number => v !== null);
      expect(values.length).toBeGreaterThan(5);
      for (const v of values) expect(v).toBe(0);
    }
    expect(slow.infos.join(" ")).toMatch(/^Estimated: pilot_proxy_convergence_time is held here as a native histogram/);
    const summary = await panel("rebuild-summary");
    const column = (name: string) => summary.series.find((s) => s.labels.series === name)?.points[0][1];
    expect(column("mean s")).toBeCloseTo(CONVERGENCE_SECONDS, 9);
    expect(column("over 10 s %")).toBe(0);
    expect(column("busy s/s")).toBeCloseTo((CONVERGENCE_SECONDS * column("rebuilds")!) / ((summary.endMs - summary.startMs) / 1000), 9);
  });

  it("give the mean write body and the mean watchers per request from the native form", async () => {
    for (const [id, series, value] of [
      ["object-sizes", "mean write body", BODY_BYTES],
      ["request-cost", "watchers notified", WATCHERS],
    ] as const) {
      const data = await panel(id);
      const found = data.series.find((s) => s.labels.series === series);
      expect(found, `${id}: ${JSON.stringify(data.series.map((s) => s.labels))}`).toBeDefined();
      const values = found!.points.map(([, v]) => v).filter((v): v is number => v !== null);
      expect(values.length, id).toBeGreaterThan(5);
      for (const v of values) expect(v, id).toBeCloseTo(value, 9);
    }
  });
});
