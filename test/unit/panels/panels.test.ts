import { describe, expect, it } from "vitest";
import { ApiFailure } from "@/lib/api/envelope";
import { findPanel, PANELS } from "@/lib/panels/catalog";
import { checkPromQL } from "@/lib/promql/parse";
import type { PanelVars } from "@/lib/panels/queries";
import { parsePanelParams } from "@/lib/panels/params";
import { chartWidths, panelUrl, WIDTH_SLOTS, widthFromCookie, type ChartWidths } from "@/lib/panels/panel-url";
import { preloadScript } from "@/lib/panels/preload-script";
import { rebuildInputs, rebuildPreloads, rebuildRequests } from "@/lib/rebuilds/requests";
import { SIGNAL_CALLS, writeLoadInputs, writeLoadPreloads, writeLoadRequests } from "@/lib/panels/write-load-requests";
import { joinResource, splitResource } from "@/lib/panels/resource-name";
import { limitSeries, MAX_PANEL_SERIES, MAX_SERIES_POINTS } from "@/lib/panels/run-panel";
import { OTHER_LABEL, topNWithOther } from "@/lib/panels/top-n";
import { joinTotals, sortTotals } from "@/lib/panels/totals";
import { seriesName, stackColumns, toColumns } from "@/lib/panels/series-name";

const vars = (over: Partial<PanelVars> = {}): PanelVars => ({
  job: "milo-apiserver",
  windowSeconds: 60,
  rangeSeconds: 21600,
  labelSets: { etcd: "group-resource", watchCache: "group-resource", watchEvents: "resource" },
  nativeHistograms: true,
  ...over,
});
const promql = (id: string, over: Partial<PanelVars> = {}) =>
  findPanel(id)!
    .queries(vars(over))
    .queries.map((q) => q.promql);

describe("panel catalog", () => {
  it("writes PromQL that Prometheus's own grammar parses, for every panel, label form and engine", () => {
    const forms: PanelVars["labelSets"][] = [
      { etcd: "group-resource", watchCache: "group-resource", watchEvents: "resource", storageEvents: "group-resource" },
      { etcd: "type", watchCache: "resource", watchEvents: "kind", storageEvents: "resource" },
      { etcd: "go-type", etcdCounter: "etcd_request_duration_seconds_count", watchCache: "none", watchEvents: "none", storageEvents: "none" },
    ];
    let checked = 0;
    for (const p of PANELS)
      for (const labelSets of forms)
        for (const nativeHistograms of [true, false])
          for (const windows of ["closed", "left-open"] as const)
            for (const over of [{}, { resource: "connectors", group: "networking.datumapis.com" }, { job: undefined }])
              for (const q of p.queries(vars({ labelSets, nativeHistograms, windows, ...over })).queries) {
                expect(checkPromQL(q.promql), `${p.id}: ${q.promql}`).toEqual({ ok: true });
                checked++;
              }
    expect(checked).toBeGreaterThan(PANELS.length * 36);
  });

  it("asks a counter's rate as rate() where the engine reads windows closed, and as its rise over the window where it reads them left-open", () => {
    const closed = promql("writes-by-verb", { resource: "connectors" });
    const leftOpen = promql("writes-by-verb", { resource: "connectors", windows: "left-open" });
    const sel = 'apiserver_request_total{job="milo-apiserver", resource="connectors", verb=~"POST|PUT|PATCH|APPLY|DELETE|DELETECOLLECTION", dry_run=""}';
    expect(closed[0]).toContain(`(rate(${sel}[60s]))`);
    // the rise, unless the counter reset in the window (or had no value a window before: the subtraction has no series), where rate() answers
    expect(leftOpen[0]).toContain(`(((${sel} - ${sel} offset 60s) >= 0 unless resets(${sel}[60s]) > 0 or increase(${sel}[60s])) / 60)`);
  });

  it("asks only the classic histogram series where the engine has no native histograms (VictoriaMetrics), and both forms elsewhere", () => {
    const texts = (nativeHistograms: boolean) =>
      PANELS.flatMap((p) => [undefined, "connectors"].flatMap((resource) => p.queries(vars({ resource, nativeHistograms })).queries.map((q) => q.promql)));
    for (const q of texts(false)) expect(q).not.toMatch(/histogram_(sum|count|fraction)\(/);
    expect(texts(true).filter((q) => /histogram_(sum|count)\(/.test(q)).length).toBeGreaterThanOrEqual(4);
  });

  it("has the stable ids", () => {
    expect(PANELS.map((p) => p.id)).toEqual([
      "writes-by-resource",
      "writes-by-verb",
      "write-totals",
      "write-errors",
      "effective-writes",
      "lease-renewals",
      "watch-fanout",
      "noop-evidence",
      "request-cost",
      "fanout-per-write",
      "watch-bytes",
      "object-sizes",
    ]);
  });
  it("counts every write verb, including APPLY and DELETECOLLECTION", () => {
    expect(promql("writes-by-resource")[0]).toBe(
      'sum by (group, resource) (rate(apiserver_request_total{job="milo-apiserver", verb=~"POST|PUT|PATCH|APPLY|DELETE|DELETECOLLECTION", dry_run=""}[60s]))',
    );
  });
  it("keeps job in the grouping when the view spans every API server", () => {
    const sel = 'apiserver_request_total{resource="connectors", verb=~"POST|PUT|PATCH|APPLY|DELETE|DELETECOLLECTION", dry_run=""}';
    const [q] = promql("write-totals", { job: undefined, resource: "connectors" });
    expect(q.startsWith("sum by (job, group, resource, verb, subresource) (")).toBe(true);
    expect(q).toContain(`last_over_time(${sel}[21600s] offset 21600s)`);
  });
  it("escapes hostile values", () => {
    const [q] = promql("writes-by-verb", { job: 'a"} or vector(1) #', resource: "connectors" });
    expect(q).toContain('job="a\\"} or vector(1) #"');
  });
  it("follows the k8s ≥1.34 and ≤1.33 etcd label sets, and falls back to the watch cache", () => {
    expect(promql("effective-writes", { resource: "connectors", group: "networking.datumapis.com" })[1]).toBe(
      'sum(rate(etcd_requests_total{job="milo-apiserver", resource="connectors", group="networking.datumapis.com", operation=~"create|update|delete"}[60s]))',
    );
    const old = vars({ resource: "connectors", group: "networking.datumapis.com", labelSets: { etcd: "type", watchCache: "resource", watchEvents: "kind" } });
    expect(findPanel("effective-writes")!.queries(old).queries[1].promql).toContain('type="connectors.networking.datumapis.com"');
    const anyGroup = vars({ resource: "connectors", labelSets: { etcd: "type", watchCache: "resource", watchEvents: "kind" } });
    expect(findPanel("effective-writes")!.queries(anyGroup).queries[1].promql).toContain('type=~"connectors(\\\\..+)?"');
    const before128 = findPanel("effective-writes")!.queries(
      vars({
        resource: "connectors",
        group: "networking.datumapis.com",
        labelSets: { etcd: "type", etcdCounter: "etcd_request_duration_seconds_count", watchCache: "resource", watchEvents: "kind" },
      }),
    );
    expect(before128.queries[1].promql).toMatch(
      /^sum\(rate\(etcd_request_duration_seconds_count\{job="milo-apiserver", type="connectors.networking.datumapis.com", operation=~"create\|update\|delete"\}/,
    );
    expect(before128.infos[0]).toMatch(/≤ 1.27/);
    const cacheOnly = findPanel("effective-writes")!.queries(vars({ labelSets: { etcd: "none", watchCache: "resource", watchEvents: "resource" } }));
    // One replica per API server (each receives every change), summed across API servers.
    expect(cacheOnly.queries[1].promql).toBe(
      'sum (max by (job) (sum by (job, instance) (rate(apiserver_watch_cache_events_received_total{job="milo-apiserver"}[60s]))))',
    );
    expect(cacheOnly.infos[0]).toMatch(/watch-cache/);
    const nothing = findPanel("effective-writes")!.queries(vars({ labelSets: { etcd: "none", watchCache: "none", watchEvents: "none" } }));
    expect(nothing.queries).toHaveLength(1);
    expect(nothing.infos[0]).toMatch(/cannot be shown/);
  });
  it("labels watch fan-out by kind on old API servers and says it cannot filter", () => {
    const out = findPanel("watch-fanout")!.queries(vars({ resource: "connectors", labelSets: { etcd: "type", watchCache: "resource", watchEvents: "kind" } }));
    expect(out.queries[0].promql).toContain("by (group, kind)");
    expect(out.infos[0]).toMatch(/every kind/);
  });
});

describe("the signal panels' queries", () => {
  it("leave dry runs out of request counts unless the view counts them", () => {
    expect(promql("noop-evidence")[0]).toContain('dry_run=""');
    expect(promql("noop-evidence", { includeDryRun: true })[0]).not.toContain("dry_run");
    expect(promql("lease-renewals", { includeDryRun: true })[0]).not.toContain("dry_run");
  });
  it("take effective writes from storage events where the API server counts them, one replica per API server", () => {
    const out = findPanel("effective-writes")!.queries(
      vars({ labelSets: { etcd: "group-resource", watchCache: "group-resource", watchEvents: "resource", storageEvents: "group-resource" } }),
    );
    expect(out.queries[1]).toEqual({
      name: "effective writes (storage events)",
      promql: 'sum (max by (job) (sum by (job, instance) (rate(apiserver_storage_events_received_total{job="milo-apiserver"}[60s]))))',
    });
  });
  it("read histogram means from classic or native histograms, and never a body-size quantile", () => {
    const [size, body] = promql("object-sizes", { resource: "connectors", group: "networking.datumapis.com" });
    expect(size).toBe(
      'max by (group, resource) (apiserver_resource_size_estimate_bytes{job="milo-apiserver", resource="connectors", group="networking.datumapis.com"})',
    );
    expect(body).toBe(
      '(sum by (group, resource) (rate(apiserver_request_body_size_bytes_sum{job="milo-apiserver", resource="connectors", group="networking.datumapis.com"}[60s])) / ' +
        'sum by (group, resource) (rate(apiserver_request_body_size_bytes_count{job="milo-apiserver", resource="connectors", group="networking.datumapis.com"}[60s]))) or ' +
        '(histogram_sum(sum by (group, resource) (rate(apiserver_request_body_size_bytes{job="milo-apiserver", resource="connectors", group="networking.datumapis.com"}[60s]))) / ' +
        'histogram_count(sum by (group, resource) (rate(apiserver_request_body_size_bytes{job="milo-apiserver", resource="connectors", group="networking.datumapis.com"}[60s]))))',
    );
    expect(promql("object-sizes").join(" ")).not.toMatch(/quantile/);
    // Before 1.34 the body-size histogram has no group label.
    const old = promql("object-sizes", {
      resource: "connectors",
      group: "networking.datumapis.com",
      labelSets: { etcd: "type", watchCache: "resource", watchEvents: "kind" },
    });
    expect(old[1]).not.toContain("group=");
  });
  it("do not divide watch events labelled by kind by a resource's writes", () => {
    const out = findPanel("fanout-per-write")!.queries(vars({ labelSets: { etcd: "type", watchCache: "resource", watchEvents: "kind" } }));
    expect(out.queries).toEqual([]);
    expect(out.infos[0]).toMatch(/by kind/);
  });
});

describe("panel parameters", () => {
  const now = Date.UTC(2026, 8, 11, 18);
  const parse = (params: Record<string, string>, known: string[] = []) => parsePanelParams(params, now, 400 * 86_400_000, known);
  const rejects = (params: Record<string, string>, pattern: RegExp, known: string[] = []) => {
    try {
      parse(params, known);
    } catch (error) {
      expect(error).toBeInstanceOf(ApiFailure);
      expect((error as ApiFailure).httpStatus).toBe(400);
      expect((error as Error).message).toMatch(pattern);
      return;
    }
    throw new Error("expected a 400");
  };

  it("defaults to the last 6 hours and about 1000 points", () => {
    expect(parse({})).toEqual({
      startMs: now - 6 * 3_600_000,
      endMs: now,
      job: undefined,
      resource: undefined,
      group: undefined,
      requestedStepSeconds: undefined,
      width: 1000,
    });
  });
  it("splits kubectl-style resources into resource and group", () => {
    expect(parse({ resource: "connectors.networking.datumapis.com" })).toMatchObject({ resource: "connectors", group: "networking.datumapis.com" });
    expect(splitResource("leases")).toEqual(["leases", undefined]);
    expect(joinResource("configmaps", "")).toBe("configmaps");
  });
  it("accepts steps as durations or seconds", () => {
    expect(parse({ step: "5m" }).requestedStepSeconds).toBe(300);
    expect(parse({ step: "30" }).requestedStepSeconds).toBe(30);
  });
  it("counts dry runs only when asked", () => {
    expect(parse({ dryRun: "include" }).includeDryRun).toBe(true);
    expect(parse({}).includeDryRun).toBeUndefined();
    rejects({ dryRun: "yes" }, /parameter dryRun/);
  });
  it("rejects bad values with messages", () => {
    rejects({ from: "yesterday" }, /parameter from/);
    rejects({ from: "now-1h", to: "now-2h" }, /later than/);
    rejects({ from: "2020-01-01T00:00:00Z" }, /at most 400 days/);
    rejects({ resource: 'connectors"} or vector(1)' }, /parameter resource/);
    rejects({ resource: "Connectors" }, /parameter resource/);
    rejects({ step: "0s" }, /parameter step/);
    rejects({ step: "9999999999" }, /parameter step: at most the range/);
    rejects({ width: "1e9" }, /parameter width/);
    rejects({ apiserver: "evil" }, /not a configured API server/, ["milo-apiserver"]);
  });
});

describe("top 10 + other", () => {
  const s = (name: string, values: (number | null)[]) => ({
    labels: { resource: name },
    points: values.map((v, i) => [i * 1000, v] as [number, number | null]),
  });
  it("keeps the largest series by area and sums the rest point by point", () => {
    const input = [s("a", [1, 1]), s("b", [5, 5]), s("c", [2, null]), s("d", [0.5, 3])];
    const out = topNWithOther(input, 2);
    expect(out.map((x) => x.labels.resource ?? "other")).toEqual(["b", "d", "other"]);
    expect(out[2].labels[OTHER_LABEL]).toBe("2");
    expect(out[2].points).toEqual([
      [0, 3],
      [1000, 1],
    ]);
  });
  it("returns everything sorted when there are few series", () => {
    expect(topNWithOther([s("a", [1]), s("b", [2])], 10).map((x) => x.labels.resource)).toEqual(["b", "a"]);
  });
  it("keeps a pinned series as itself, however small, and sums only the rest", () => {
    const input = [s("a", [1, 1]), s("b", [5, 5]), s("c", [2, null]), s("d", [0.5, 3])];
    const out = topNWithOther(input, 2, (labels) => labels.resource === "a");
    expect(out.map((x) => x.labels.resource ?? "other")).toEqual(["b", "d", "a", "other"]);
    expect(out[3].labels[OTHER_LABEL]).toBe("1");
    expect(out[3].points).toEqual([
      [0, 2],
      [1000, null],
    ]);
    // Pinned among the largest already: nothing changes.
    expect(topNWithOther(input, 2, (labels) => labels.resource === "b")).toEqual(topNWithOther(input, 2));
  });
});

describe("what a panel passes on", () => {
  const s = (name: string, value: number, points = 3) => ({
    labels: { site: name },
    points: Array.from({ length: points }, (_, i) => [i * 1000, value] as [number, number]),
  });
  it("keeps the 100 series with the largest values, in their order, and says how many were left out", () => {
    const input = Array.from({ length: 150 }, (_, i) => s(`s${i}`, i % 2 ? 1000 + i : i));
    const { series, warnings } = limitSeries(input);
    expect(series).toHaveLength(MAX_PANEL_SERIES);
    // The odd ones (1000+) and the 25 largest even ones; order as Prometheus gave them.
    const expected = input.filter((x, i) => i % 2 === 1 || i >= 100).map((x) => x.labels.site);
    expect(series.map((x) => x.labels.site)).toEqual(expected);
    expect(warnings).toEqual(["Showing the 100 series with the largest values of 150: narrow the selection to see the rest."]);
    expect(limitSeries(input.slice(0, 10))).toEqual({ series: input.slice(0, 10), warnings: [] });
  });
  it("cuts a series with more points than Prometheus ever answers, and says so", () => {
    const { series, warnings } = limitSeries([s("long", 1, MAX_SERIES_POINTS + 5), s("short", 2)]);
    expect(series.map((x) => x.points.length)).toEqual([MAX_SERIES_POINTS, 3]);
    expect(warnings[0]).toMatch(/more than 11,000 points for a series/);
  });
});

describe("totals and chart rows", () => {
  const t = (labels: Record<string, string>, v: number) => ({ labels, points: [[1, v]] as [number, number][] });
  it("joins current and previous by series and sorts by change", () => {
    const rows = joinTotals(
      [t({ resource: "connectors", group: "networking.datumapis.com", verb: "PUT", subresource: "status" }, 753), t({ resource: "leases", verb: "PATCH" }, 10)],
      [t({ resource: "connectors", group: "networking.datumapis.com", verb: "PUT", subresource: "status" }, 61)],
    );
    expect(rows[0]).toMatchObject({ resource: "connectors.networking.datumapis.com", current: 753, previous: 61 });
    expect(rows[1].previous).toBe(0);
    expect(sortTotals(rows, "change", true)[0].resource).toBe("leases");
    expect(sortTotals(rows, "resource", false)[0].resource).toBe("connectors.networking.datumapis.com");
  });
  it("names series for legends and lines up rows with gaps", () => {
    expect(seriesName({ job: "milo-apiserver", resource: "connectors", group: "networking.datumapis.com" })).toBe(
      "milo-apiserver · connectors.networking.datumapis.com",
    );
    expect(seriesName({ verb: "PUT", subresource: "status" })).toBe("PUT status");
    expect(seriesName({ [OTHER_LABEL]: "3" })).toBe("other (3 more)");
    expect(seriesName({})).toBe("total");
    expect(
      toColumns([
        { labels: {}, points: [[2, 1]] },
        {
          labels: {},
          points: [
            [1, 5],
            [2, 6],
          ],
        },
      ]),
    ).toEqual({
      xs: [1, 2],
      ys: [
        [null, 1],
        [5, 6],
      ],
    });
  });
  it("puts every series' points in the column of their timestamp, series with gaps, offsets and points out of order", () => {
    let seed = 7;
    const random = () => (seed = (seed * 48_271) % 2_147_483_647) / 2_147_483_647;
    const series = Array.from({ length: 12 }, (_, i) => {
      const points: [number, number][] = [];
      for (let t = 0; t < 400; t++) if (random() < 0.8) points.push([1_000_000 + t * 15_000 + (i % 3 === 0 ? 7_000 : 0), i * 1_000 + t]);
      // One series answered out of order.
      if (i === 5) points.reverse();
      return { labels: { i: String(i) }, points };
    });
    const { xs, ys } = toColumns(series);
    // Read back: each series' value at each column, by looking its timestamp up in its own points.
    const expected = series.map((s) => xs.map((x) => s.points.find(([t]) => t === x)?.[1] ?? null));
    expect(ys).toEqual(expected);
    expect(xs).toEqual([...new Set(series.flatMap((s) => s.points.map(([t]) => t)))].sort((a, b) => a - b));
  });
  it("stacks series as running totals, leaving gaps out of the sum", () => {
    expect(
      stackColumns([
        [1, null, 3],
        [10, 20, 30],
        [null, 100, 0.5],
      ]),
    ).toEqual([
      [1, null, 3],
      [11, 20, 33],
      [null, 120, 33.5],
    ]);
  });
});

describe("the width cookie", () => {
  it("takes a plausible page width and nothing else", () => {
    expect(widthFromCookie("1384")).toBe(1384);
    for (const bad of [undefined, "", "0", "99", "20001", "1e3", "-5", "12px", "1384; path=/", " 1384"]) expect(widthFromCookie(bad), String(bad)).toBeNull();
  });
});

describe("the preload script", () => {
  /** Runs the script against a page whose measured element is `pageWidth` wide; returns the links it added. */
  function runScript(script: string, pageWidth: number): { rel: string; as: string; crossOrigin: string; href: string }[] {
    const added: { rel: string; as: string; crossOrigin: string; href: string }[] = [];
    const document = {
      querySelector: (selector: string) => (selector === "main" ? {} : null),
      createElement: () => ({ rel: "", as: "", crossOrigin: "", href: "" }),
      head: { appendChild: (link: (typeof added)[number]) => added.push(link) },
    };
    class ResizeObserver {
      constructor(private readonly report: (entries: { contentRect: { width: number } }[]) => void) {}
      observe() {
        this.report([{ contentRect: { width: pageWidth + 0.4 } }]);
      }
      disconnect() {}
    }
    new Function("document", "ResizeObserver", script)(document, ResizeObserver);
    return added;
  }

  it("preloads exactly the URLs the page then asks for, at the width it measures", () => {
    const nowMs = Date.parse("2026-09-11T18:00:00Z");
    const search = { from: "now-48h", to: "now", apiserver: "milo-apiserver", resource: "connectors.networking.datumapis.com" };
    const script = preloadScript(writeLoadPreloads(search, WIDTH_SLOTS, nowMs), "main", WIDTH_SLOTS);
    const calls = writeLoadRequests({ startMs: nowMs - 48 * 3_600_000, endMs: nowMs, apiserver: search.apiserver, resource: search.resource });
    for (const pageWidth of [640, 1023, 1384, 2000]) {
      const links = runScript(script, pageWidth);
      // Every panel but the signals, which the page asks for once the write rates have answered.
      const later = new Set<string>(SIGNAL_CALLS);
      const panels = Object.entries(writeLoadInputs(calls, chartWidths(pageWidth))).flatMap(([name, input]) =>
        input && !later.has(name) ? [panelUrl(input)] : [],
      );
      const asked = [...panels, `/api/markers?from=${nowMs - 48 * 3_600_000}&to=${nowMs}`, `/api/apiservers?from=${nowMs - 48 * 3_600_000}&to=${nowMs}`];
      expect(links.map((l) => l.href)).toEqual(asked);
      for (const link of links) expect([link.rel, link.as, link.crossOrigin]).toEqual(["preload", "fetch", "anonymous"]);
    }
    // The Edge rebuilds page's, with a before/after time: every chart half the page.
    const at = String(nowMs - 3_600_000);
    const rebuilds = preloadScript(rebuildPreloads({ from: "now-48h", at }, WIDTH_SLOTS, nowMs), "main", WIDTH_SLOTS);
    const rebuildCalls = rebuildRequests({ startMs: nowMs - 48 * 3_600_000, endMs: nowMs, atMs: Number(at) });
    for (const pageWidth of [640, 1384]) {
      const inputs = rebuildInputs(rebuildCalls, chartWidths(pageWidth));
      const asked = [
        ...[...Object.values(inputs.charts), inputs.summary, inputs.summaryBefore, inputs.beforeAt!, inputs.afterAt!].map(panelUrl),
        `/api/markers?from=${nowMs - 48 * 3_600_000}&to=${nowMs}`,
      ];
      expect(runScript(rebuilds, pageWidth).map((l) => l.href)).toEqual(asked);
    }
    // Unmeasured (hidden) pages preload nothing; nor does a range the page refuses.
    expect(runScript(script, 0)).toEqual([]);
    expect(writeLoadPreloads({ from: "now", to: "now-1h" }, WIDTH_SLOTS, nowMs)).toEqual([]);
  });

  it("carries chartWidths' own source, and nothing from the URL can close the script element", () => {
    const shipped = new Function(`return (${chartWidths.toString()})`)() as (w: number) => ChartWidths;
    for (let width = 0; width <= 5000; width += 7) expect(shipped(width)).toEqual(chartWidths(width));
    const hostile = preloadScript(["/api/panels/x?resource=</script><script>alert(1)</script>&width=-1"], "main", WIDTH_SLOTS);
    expect(hostile).not.toMatch(/<\/?script/i);
    expect(runScript(hostile, 1400).map((l) => l.href)).toEqual(["/api/panels/x?resource=</script><script>alert(1)</script>&width=1400"]);
  });
});
