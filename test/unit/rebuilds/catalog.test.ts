import { describe, expect, it } from "vitest";
import { findRebuildPanel, REBUILD_PANELS, slowThresholds, type RebuildVars } from "@/lib/rebuilds/catalog";
import { findRebuildProfile, REBUILD_PROFILE_IDS } from "@/lib/rebuilds/profiles";
import { checkPromQL } from "@/lib/promql/parse";
import { rebuildCalls, rebuildRequests } from "@/lib/rebuilds/requests";
import { capWarnings } from "@/lib/rebuilds/run";

const vars = (id: string, buckets: number[], extra: Partial<RebuildVars> = {}): RebuildVars => ({
  detected: { profile: findRebuildProfile(id)!, reason: "test", buckets, native: false },
  siteLabel: "cluster",
  windowSeconds: 120,
  rangeSeconds: 3600,
  hubJobs: ["karmada-system/karmada-apiserver"],
  nativeHistograms: true,
  upstream: { resource: "connectors", group: "networking.datumapis.com" },
  ...extra,
});

const promql = (panel: string, v: RebuildVars) =>
  findRebuildPanel(panel)!
    .queries(v)
    .queries.map((q) => q.promql);

describe("rebuild panels", () => {
  it("write PromQL that Prometheus's own grammar parses, for every profile and engine", () => {
    let checked = 0;
    for (const id of REBUILD_PROFILE_IDS)
      for (const nativeHistograms of [true, false])
        for (const native of [true, false])
          for (const p of REBUILD_PANELS) {
            const v = vars(id, [1, 5, 10], { nativeHistograms });
            for (const q of p.queries({ ...v, detected: { ...v.detected, native } }).queries) {
              expect(checkPromQL(q.promql), `${id} ${p.id}: ${q.promql}`).toEqual({ ok: true });
              checked++;
            }
          }
    expect(checked).toBeGreaterThan(REBUILD_PROFILE_IDS.length * 4);
  });

  it("ask only the classic series where the engine has no native histograms (VictoriaMetrics), and both forms elsewhere", () => {
    const classicOnly = REBUILD_PANELS.flatMap((p) => p.queries(vars("envoy-gateway", [1, 5, 10], { nativeHistograms: false })).queries.map((q) => q.promql));
    expect(classicOnly.length).toBeGreaterThan(0);
    for (const q of classicOnly) expect(q).not.toMatch(/histogram_(sum|count|fraction)\(/);
    const both = REBUILD_PANELS.flatMap((p) => p.queries(vars("envoy-gateway", [1, 5, 10])).queries.map((q) => q.promql));
    expect(both.filter((q) => /histogram_sum\(/.test(q)).length).toBeGreaterThan(0);
  });

  it("count Envoy Gateway rebuilds per hour per site from the xds runner", () => {
    expect(promql("rebuild-rate", vars("envoy-gateway", [1, 5, 10]))).toEqual([
      'sum by (cluster) (rate(watchable_subscribe_total{runner="xds", message="xds-ir", status="success"}[120s])) * 3600',
    ]);
  });

  it("take the exact mean from _sum/_count and slow shares from bucket bounds in either spelling", () => {
    const v = vars("envoy-gateway", [0.001, 0.01, 0.1, 1, 5, 10]);
    expect(promql("rebuild-duration-mean", v)[0]).toBe(
      '(sum by (cluster) (rate(watchable_subscribe_duration_seconds_sum{runner="xds", message="xds-ir"}[120s])) / sum by (cluster) (rate(watchable_subscribe_duration_seconds_count{runner="xds", message="xds-ir"}[120s]))) or ' +
        '(histogram_sum(sum by (cluster) (rate(watchable_subscribe_duration_seconds{runner="xds", message="xds-ir"}[120s]))) / histogram_count(sum by (cluster) (rate(watchable_subscribe_duration_seconds{runner="xds", message="xds-ir"}[120s]))))',
    );
    const shares = findRebuildPanel("rebuild-slow-share")!.queries(v).queries;
    expect(shares.map((q) => q.name)).toEqual(["over 5 s", "over 10 s"]);
    expect(shares[1].promql).toContain('le=~"10(\\\\.0)?"');
  });

  it("read a histogram in milliseconds in seconds: bounds written as the exporter writes them, values scaled", () => {
    const v = vars("nginx-gateway-fabric", [0.5, 1, 5, 10, 30]);
    const [over5, over10] = promql("rebuild-slow-share", v);
    expect(over5).toContain('le=~"5000(\\\\.0)?"');
    expect(over10).toContain('le=~"10000(\\\\.0)?"');
    expect(promql("rebuild-duration-mean", v)[0]).toMatch(/^\(.*\) \* 0\.001$/);
    expect(promql("rebuild-busy", v)[0]).toBe(
      "(sum by (cluster) (rate(nginx_gateway_fabric_event_batch_processing_milliseconds_sum{}[120s])) or histogram_sum(sum by (cluster) (rate(nginx_gateway_fabric_event_batch_processing_milliseconds{}[120s])))) * 0.001",
    );
    expect(promql("rebuild-duration-quantiles", v)[0]).toMatch(/^\(histogram_quantile\(0\.5, .*\) \* 0\.001$/);
  });

  it("count slow shares of a native-only histogram with histogram_fraction, in the histogram's unit, and say they are estimates", () => {
    const native = (id: string) => ({ ...vars(id, []), detected: { ...vars(id, []).detected, native: true } });
    const istio = findRebuildPanel("rebuild-slow-share")!.queries(native("istio"));
    expect(istio.queries).toEqual([
      { name: "over 5 s", promql: "100 * (1 - histogram_fraction(-Inf, 5, sum by (cluster) (rate(pilot_proxy_convergence_time{}[120s]))))" },
      { name: "over 10 s", promql: "100 * (1 - histogram_fraction(-Inf, 10, sum by (cluster) (rate(pilot_proxy_convergence_time{}[120s]))))" },
    ]);
    expect(istio.infos.join(" ")).toMatch(/^Estimated: pilot_proxy_convergence_time is held here as a native histogram/);
    expect(promql("rebuild-slow-share", native("nginx-gateway-fabric"))[1]).toContain("histogram_fraction(-Inf, 10000, ");
    const summary = findRebuildPanel("rebuild-summary")!.queries(native("istio"));
    expect(summary.queries.map((q) => q.name)).toEqual(["rebuilds", "mean s", "busy s/s", "over 10 s %"]);
    expect(summary.queries[3].promql).toBe("100 * (1 - histogram_fraction(-Inf, 10, sum by (cluster) (increase(pilot_proxy_convergence_time{}[3600s]))))");
    // Classic buckets: counted, not estimated.
    expect(findRebuildPanel("rebuild-slow-share")!.queries(vars("istio", [1, 5, 10])).infos).toEqual([]);
  });

  it("take a summary's mean alone, with no native-histogram branch", () => {
    expect(promql("rebuild-stages", vars("contour", []))).toEqual([
      "sum by (cluster) (rate(contour_dagrebuild_seconds_sum{}[120s])) / sum by (cluster) (rate(contour_dagrebuild_seconds_count{}[120s]))",
      "sum by (cluster) (rate(contour_cachehandler_onupdate_duration_seconds_sum{}[120s])) / sum by (cluster) (rate(contour_cachehandler_onupdate_duration_seconds_count{}[120s]))",
    ]);
  });

  it("fall back to the top bound when 5 s and 10 s are not bucket bounds, and say when a profile cannot answer", () => {
    expect(slowThresholds([0.1, 0.5, 1, 3, 30])).toEqual([30]);
    expect(slowThresholds([0.1, 5])).toEqual([5]);
    const contour = vars("contour", []);
    expect(findRebuildPanel("rebuild-slow-share")!.queries(contour)).toEqual({
      queries: [],
      infos: ["contour_dagrebuild_seconds has no buckets, so slow shares cannot be counted."],
    });
    expect(findRebuildPanel("rebuild-backlog")!.queries(contour).infos[0]).toMatch(/no backlog gauge/);
    expect(findRebuildPanel("rebuild-amplification")!.queries(vars("envoy-gateway", [10], { hubJobs: [] })).infos[0]).toMatch(/apiservers\.hub/);
  });

  it("escape the hub jobs and divide per site by the hub's successful upstream writes", () => {
    const [q] = promql("rebuild-amplification", vars("nso-extension", [10], { hubJobs: ["a.b|.*"] }));
    expect(q).toContain('job=~"a\\\\.b\\\\|\\\\.\\\\*"');
    expect(q).toContain("/ on() group_left() sum(rate(apiserver_request_total{");
    expect(q).toContain('code=~"2.."');
  });

  it("draw the top bucket on the quantile panel and a saturation line on the busy panel", () => {
    expect(findRebuildPanel("rebuild-duration-quantiles")!.thresholds!(vars("envoy-gateway", [1, 5, 10]))).toEqual([
      { value: 10, label: "top bucket: ≥ 10 s" },
    ]);
    expect(findRebuildPanel("rebuild-busy")!.thresholds!(vars("envoy-gateway", [10]))).toEqual([{ value: 1, label: "saturated" }]);
  });
});

describe("capWarnings", () => {
  it("names each quantile and site that reaches the top finite bucket, and nothing below it", () => {
    const series = [
      {
        labels: { series: "p50", cluster: "b" },
        points: [
          [1, 10],
          [2, 9.5],
        ] as [number, number | null][],
      },
      {
        labels: { series: "p50", cluster: "a" },
        points: [
          [1, 10],
          [2, 10],
        ] as [number, number | null][],
      },
      {
        labels: { series: "p90", cluster: "a" },
        points: [
          [1, 9.99],
          [2, null],
        ] as [number, number | null][],
      },
    ];
    expect(capWarnings(series, 10, "cluster")).toEqual([
      'p50 reaches the top finite bucket (10 s) at a, b (3 points): there it means "10 s or more", not 10 s. Read the mean and the slow share instead.',
    ]);
    expect(capWarnings(series, undefined, "cluster")).toEqual([]);
  });
});

describe("rebuildRequests", () => {
  it("compares before and after only for a time inside the range", () => {
    expect(rebuildRequests({ startMs: 0, endMs: 100, atMs: 40 }).beforeAt).toEqual({ panel: "rebuild-summary", startMs: 0, endMs: 40 });
    expect(rebuildRequests({ startMs: 0, endMs: 100, atMs: 100 }).beforeAt).toBeUndefined();
    expect(rebuildCalls({ startMs: 0, endMs: 100 }).map((c) => c.panel)).toContain("rebuild-summary");
    expect(rebuildRequests({ startMs: 100, endMs: 200 }).summaryBefore).toEqual({ panel: "rebuild-summary", startMs: 0, endMs: 100 });
  });
});
