/**
 * The Grafana dashboard's shape. No JSON schema of Grafana's dashboard model is published in a registry this project
 * reaches (the Foundation SDK on npm carries builders and TypeScript types, not a schema), so the shape Grafana imports
 * is checked here, and the integration tests check that each query is the panel's own.
 */
import { describe, expect, it } from "vitest";
import { GRAFANA_PLACEHOLDERS, grafanaDashboard, grafanaExpr } from "@/lib/grafana/dashboard";
import { PANELS } from "@/lib/panels/catalog";
import { checkPromQL } from "@/lib/promql/parse";

const labelSets = { etcd: "group-resource", watchCache: "group-resource", watchEvents: "resource", storageEvents: "group-resource" } as const;
const { windowSeconds, rangeSeconds } = GRAFANA_PLACEHOLDERS;

function dashboard() {
  const panels = PANELS.map((p) => ({
    title: p.title,
    description: p.description,
    unit: p.unit,
    mode: p.mode,
    stacked: p.chart === "stacked",
    queries: p.queries({ job: "$apiserver", resource: "$resource", group: "$group", windowSeconds, rangeSeconds, labelSets, nativeHistograms: true }).queries,
  }));
  return grafanaDashboard({
    title: "Churnscope: Write load",
    startMs: Date.parse("2026-09-11T12:00:00Z"),
    endMs: Date.parse("2026-09-11T16:00:00Z"),
    apiservers: ["milo-apiserver", "karmada-system/karmada-apiserver"],
    apiserver: "milo-apiserver",
    resource: "connectors",
    group: "networking.datumapis.com",
    viewUrl: "https://churnscope.example/?apiserver=milo-apiserver",
    panels,
  });
}

describe("a view as a Grafana dashboard", () => {
  it("lays its panels out without overlap, each with unique ids and a query per target on the chosen data source", () => {
    const d = dashboard();
    expect(d.panels.length).toBe(PANELS.length);
    expect(new Set(d.panels.map((p) => p.id)).size).toBe(d.panels.length);
    const cells = new Set<string>();
    for (const p of d.panels) {
      for (let x = p.gridPos.x; x < p.gridPos.x + p.gridPos.w; x++)
        for (let y = p.gridPos.y; y < p.gridPos.y + p.gridPos.h; y++) {
          expect(cells.has(`${x},${y}`), p.title).toBe(false);
          cells.add(`${x},${y}`);
        }
      expect(p.gridPos.x + p.gridPos.w).toBeLessThanOrEqual(24);
      expect(new Set(p.targets.map((t) => t.refId)).size).toBe(p.targets.length);
      for (const t of p.targets) expect(t.datasource).toEqual({ type: "prometheus", uid: "${datasource}" });
      expect(p.datasource.uid).toBe("${datasource}");
    }
    expect(d.templating.list[0]).toMatchObject({ name: "datasource", type: "datasource", query: "prometheus" });
    expect(d.templating.list[1]).toMatchObject({
      name: "apiserver",
      type: "custom",
      query: "milo-apiserver,karmada-system/karmada-apiserver",
      current: { value: "milo-apiserver" },
    });
    expect(d.time).toEqual({ from: "2026-09-11T12:00:00.000Z", to: "2026-09-11T16:00:00.000Z" });
    expect(d.links[0].url).toBe("https://churnscope.example/?apiserver=milo-apiserver&from=${__from}&to=${__to}");
  });

  it("asks with Grafana's rate interval and range, and its queries parse once the variables hold values", () => {
    const exprs = dashboard().panels.flatMap((p) => p.targets.map((t) => t.expr));
    expect(exprs.some((e) => e.includes("[$__rate_interval]"))).toBe(true);
    expect(exprs.some((e) => e.includes("[$__range]"))).toBe(true);
    for (const e of exprs) {
      expect(e).not.toContain(String(windowSeconds));
      expect(e).not.toContain(String(rangeSeconds));
      const filled = e.replaceAll("$__rate_interval", "1m").replaceAll("$__range_s", "3600").replaceAll("$__range", "1h").replaceAll("$apiserver", "x");
      expect(checkPromQL(filled.replaceAll("$resource", "r").replaceAll("$group", "g")), e).toEqual({ ok: true });
    }
    expect(grafanaExpr(`sum(increase(x[${rangeSeconds}s])) / ${rangeSeconds}`)).toBe("sum(increase(x[$__range])) / $__range_s");
    // a rate asked as its rise over the window (an engine that reads windows left-open): every use of the window
    expect(
      grafanaExpr(`((x - x offset ${windowSeconds}s) >= 0 unless resets(x[${windowSeconds}s]) > 0 or increase(x[${windowSeconds}s])) / ${windowSeconds}`),
    ).toBe("((x - x offset $__rate_interval) >= 0 unless resets(x[$__rate_interval]) > 0 or increase(x[$__rate_interval])) / ($__rate_interval_ms / 1000)");
    expect(grafanaExpr(`(x - x offset ${rangeSeconds}s) >= 0 unless resets(x[${rangeSeconds}s]) > 0 or increase(x[${rangeSeconds}s])`)).toBe(
      "(x - x offset $__range) >= 0 unless resets(x[$__range]) > 0 or increase(x[$__range])",
    );
  });
});
