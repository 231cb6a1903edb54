/**
 * A Churnscope view as a Grafana dashboard (the classic JSON model Grafana imports): the same PromQL with the API
 * server, resource and group as dashboard variables and Grafana's own rate interval and range in place of
 * Churnscope's, the view's range, and links back to the same view in Churnscope at Grafana's current range.
 */
import type { Unit } from "../panels/queries";

/** Placeholders the queries are written with, replaced by Grafana's variables. */
export const GRAFANA_PLACEHOLDERS = {
  job: "$apiserver",
  resource: "$resource",
  group: "$group",
  /** seconds that no view uses, so `[…s]` written with them is only ever a window to replace */
  windowSeconds: 86_399_917,
  rangeSeconds: 86_399_941,
} as const;

export interface GrafanaPanelInput {
  title: string;
  description: string;
  unit: Unit;
  mode: "range" | "total";
  stacked: boolean;
  queries: { name?: string; promql: string }[];
}

export interface GrafanaDashboardInput {
  title: string;
  startMs: number;
  endMs: number;
  /** the API servers to choose from, and the one the view had (undefined: every one) */
  apiservers: string[];
  apiserver?: string;
  resource?: string;
  group?: string;
  /** the view in Churnscope, absolute, without from and to (Grafana's range is added) */
  viewUrl: string;
  panels: GrafanaPanelInput[];
}

/** Grafana's unit ids for Churnscope's units (rates per second keep "/s" as a suffix Grafana draws). */
const UNITS: Record<Unit, string> = {
  "writes/s": "suffix: writes/s",
  "requests/s": "reqps",
  "events/s": "suffix: events/s",
  writes: "short",
  "rebuilds/h": "suffix: rebuilds/h",
  s: "s",
  "%": "percent",
  "s/s": "percentunit",
  updates: "short",
  "updates/h": "suffix: updates/h",
  "rebuilds/write": "suffix: rebuilds/write",
  "per site": "short",
  count: "short",
  "per request": "short",
  "events/write": "suffix: events/write",
  "B/s": "Bps",
  bytes: "bytes",
  "events/h": "suffix: events/h",
};

/** The query text with Grafana's variables for Churnscope's placeholders (a window's seconds as a number: a rate's rise over it). */
export function grafanaExpr(promql: string): string {
  return promql
    .replaceAll(`[${GRAFANA_PLACEHOLDERS.windowSeconds}s]`, "[$__rate_interval]")
    .replaceAll(`offset ${GRAFANA_PLACEHOLDERS.windowSeconds}s`, "offset $__rate_interval")
    .replaceAll(`${GRAFANA_PLACEHOLDERS.windowSeconds}`, "($__rate_interval_ms / 1000)")
    .replaceAll(`[${GRAFANA_PLACEHOLDERS.rangeSeconds}s]`, "[$__range]")
    .replaceAll(`offset ${GRAFANA_PLACEHOLDERS.rangeSeconds}s`, "offset $__range")
    .replaceAll(`${GRAFANA_PLACEHOLDERS.rangeSeconds}`, "$__range_s");
}

const variable = (name: string, label: string, value: string | undefined, options: string[]) => ({
  name,
  label,
  type: "custom",
  query: options.join(","),
  current: { text: value ?? options[0] ?? "", value: value ?? options[0] ?? "" },
  options: options.map((o) => ({ text: o, value: o, selected: o === (value ?? options[0]) })),
  hide: 0,
});

export function grafanaDashboard(input: GrafanaDashboardInput) {
  const back = `${input.viewUrl}${input.viewUrl.includes("?") ? "&" : "?"}from=\${__from}&to=\${__to}`;
  const templating = [
    { name: "datasource", label: "Prometheus", type: "datasource", query: "prometheus", hide: 0 },
    ...(input.apiserver !== undefined
      ? [variable("apiserver", "API server", input.apiserver, input.apiservers.length ? input.apiservers : [input.apiserver])]
      : []),
    ...(input.resource !== undefined
      ? [{ name: "resource", label: "resource", type: "textbox", query: input.resource, current: { text: input.resource, value: input.resource }, hide: 0 }]
      : []),
    ...(input.group !== undefined
      ? [{ name: "group", label: "group", type: "textbox", query: input.group, current: { text: input.group, value: input.group }, hide: 0 }]
      : []),
  ];
  const panels = input.panels.map((p, i) => ({
    id: i + 1,
    type: p.mode === "total" ? "table" : "timeseries",
    title: p.title,
    description: p.description,
    datasource: { type: "prometheus", uid: "${datasource}" },
    // Two panels a row, 12 columns each and 8 high.
    gridPos: { x: (i % 2) * 12, y: Math.floor(i / 2) * 8, w: 12, h: 8 },
    fieldConfig: {
      defaults: {
        unit: UNITS[p.unit],
        ...(p.mode === "range" ? { custom: { stacking: { mode: p.stacked ? "normal" : "none" }, fillOpacity: p.stacked ? 60 : 0 } } : {}),
      },
      overrides: [],
    },
    targets: p.queries.map((q, k) => ({
      refId: String.fromCharCode(65 + k),
      datasource: { type: "prometheus", uid: "${datasource}" },
      expr: grafanaExpr(q.promql),
      ...(p.mode === "total" ? { instant: true, range: false, format: "table" } : { range: true, instant: false }),
      ...(q.name ? { legendFormat: q.name } : {}),
    })),
    links: [{ title: "Open in Churnscope", url: back, targetBlank: true }],
  }));
  return {
    title: input.title,
    uid: null,
    tags: ["churnscope"],
    timezone: "utc",
    editable: true,
    schemaVersion: 41,
    version: 1,
    time: { from: new Date(input.startMs).toISOString(), to: new Date(input.endMs).toISOString() },
    templating: { list: templating },
    annotations: { list: [] },
    links: [{ title: "Open this view in Churnscope", type: "link", url: back, targetBlank: true }],
    panels,
  };
}
