/**
 * What a Write load panel is, and the selectors its queries share: every write verb, the view's API
 * server and resource, dry runs left out unless the view asks for them. Browser values reach
 * PromQL only through promql.ts's escaping selector builder.
 */
import { NEVER_STORED_RESOURCES, NEVER_STORED_SUBRESOURCE } from "../churn/never-stored";
import type { WindowSemantics } from "../promql/flavor";
import { histogramMean } from "../promql/histogram";
import { byClause, selector, type Matcher } from "../promql/promql";
import { promDuration } from "../time/duration";
import type { LabelSets } from "./probe";

/** Every write verb the apiserver reports; APPLY is server-side apply, which "PUT|PATCH" regexes miss. */
export const WRITE_VERBS = ["POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"] as const;
const WRITE_VERB_REGEX = WRITE_VERBS.join("|");

export type Unit =
  | "writes/s"
  | "requests/s"
  | "events/s"
  | "writes"
  | "rebuilds/h"
  | "s"
  | "%"
  | "s/s"
  | "updates"
  | "updates/h"
  | "rebuilds/write"
  | "per site"
  | "count"
  | "per request"
  | "events/write"
  | "B/s"
  | "bytes"
  | "events/h";

export interface PanelVars {
  /** apiserver `job`; undefined means every API server (then `job` is kept in the grouping). */
  job?: string;
  resource?: string;
  /** API group of `resource`; undefined matches any group. "" is the core group. */
  group?: string;
  /** Rate window, seconds. */
  windowSeconds: number;
  /** Whole range, seconds (for totals). */
  rangeSeconds: number;
  labelSets: LabelSets;
  /** whether the engine has native histograms (flavor.ts): without, only classic series are asked */
  nativeHistograms: boolean;
  /** how the engine reads a rate's window (flavor.ts); closed, Prometheus 2's, when not given */
  windows?: WindowSemantics;
  /** Count requests sent with ?dryRun (validated, never stored); left out unless the view asks. */
  includeDryRun?: boolean;
  /** the labels that tell a component's scrape targets apart (configuration `componentLabels`), for client-go's own metrics */
  componentLabels?: string[];
}

export interface NamedQuery {
  /** Shown as the `series` label when a panel sends several queries. */
  name?: string;
  promql: string;
  /** Said under the panel when this query answers no series: which metric is not scraped. */
  whenEmpty?: string;
}

export interface PanelDef {
  id: string;
  title: string;
  description: string;
  unit: Unit;
  /** range: a chart over time; total: one instant value per series at the end of the range. */
  mode: "range" | "total";
  chart: "stacked" | "lines" | "table";
  needsResource: boolean;
  /** Keep the N largest series and sum the rest into one "other" series. */
  topN?: number;
  /** Keep the N largest series and leave the rest out (for values that do not add up, such as sizes). */
  largest?: number;
  /** The selected resource only keeps its own series out of "other": the query is the same without it. */
  resourcePinsSeries?: boolean;
  /** Present when the panel shows an estimate: the formula and its caveats. */
  estimate?: string;
  queries(vars: PanelVars): { queries: NamedQuery[]; infos: string[] };
}

export function m(label: string, op: Matcher["op"], value: string | undefined): Matcher | undefined {
  return value === undefined ? undefined : { label, op, value };
}

/** Dry-run requests carry dry_run="All"; real ones an empty (or no) dry_run label. */
export const notDryRun = (vars: PanelVars) => (vars.includeDryRun ? undefined : m("dry_run", "=", ""));

/** Write requests of the view's API server and resource. */
export function writes(vars: PanelVars, extra: (Matcher | undefined)[] = []): string {
  return selector("apiserver_request_total", [
    m("job", "=", vars.job),
    m("resource", "=", vars.resource),
    m("group", "=", vars.group),
    m("verb", "=~", WRITE_VERB_REGEX),
    notDryRun(vars),
    ...extra,
  ]);
}

/** Write requests the API server answers without storing anything (reviews and TokenRequests), left out of what can be stored. */
export const NEVER_STORED: Matcher[] = [
  { label: "resource", op: "!~", value: NEVER_STORED_RESOURCES.join("|") },
  { label: "subresource", op: "!=", value: NEVER_STORED_SUBRESOURCE },
];

/** Successful writes that can reach storage, as one line: the left side of every no-op estimate. */
export function storableWrites(vars: PanelVars): NamedQuery {
  return { name: "API writes (2xx)", promql: `sum(${counterRate(writes(vars, [m("code", "=~", "2.."), ...NEVER_STORED]), vars)})` };
}

/** Group by these labels, plus `job` when the view spans every API server. */
export function by(vars: PanelVars, labels: string[]): string {
  return byClause(vars.job === undefined ? ["job", ...labels] : labels);
}

export const rateWindow = (vars: PanelVars) => promDuration(vars.windowSeconds);

/**
 * A counter's rise over a window, exact where the scrapes sit on its edges. Prometheus 2 reads a window as [t−w, t],
 * so increase() is then that rise. Prometheus 3 and Thanos read (t−w, t]: increase() leaves the left edge's sample
 * out and extrapolates, so there the rise is asked for directly, the counter's value less its value a window before;
 * where it reset within the window or had no value a window before (it began within it), and for a native histogram
 * (which a comparison drops), increase() answers.
 */
export function counterRise(series: string, seconds: number, windows: WindowSemantics = "closed"): string {
  const w = promDuration(seconds);
  if (windows !== "left-open") return `increase(${series}[${w}])`;
  return `(${series} - ${series} offset ${w}) >= 0 unless resets(${series}[${w}]) > 0 or increase(${series}[${w}])`;
}

/** How `what` (counts, totals) were asked where counterRise asks for the rise: said under the chart. */
export const riseInfo = (what: string, span: "window" | "range") =>
  `${what} are each counter's rise over the ${span} (its value less its value a ${span} before), exact where the scrapes sit on the ${span}'s edges; where a counter reset or began within it, increase(), which extrapolates to the ${span}'s edges.`;

/** A counter's per-second rate over each window: rate(), or where the engine reads windows left-open, its rise over the window (counterRise) per second. */
export function counterRate(series: string, window: { windowSeconds: number; windows?: WindowSemantics }): string {
  if (window.windows !== "left-open") return `rate(${series}[${promDuration(window.windowSeconds)}])`;
  return `(${counterRise(series, window.windowSeconds, "left-open")}) / ${promDuration(window.windowSeconds).slice(0, -1)}`;
}

/**
 * A counter every API server replica reports in full (each receives every event): one replica's
 * rate per API server, summed across API servers.
 */
export function perReplica(vars: PanelVars, series: string, labels: string[] = []): string {
  return `sum${byClause(labels)} (max${byClause(["job", ...labels])} (sum${byClause(["job", "instance", ...labels])} (${counterRate(series, vars)})))`;
}

/** A histogram's mean over each window for the view's API server, grouped by `labels` (see histogramMean). */
export function meanOf(vars: PanelVars, metric: string, matchers: (Matcher | undefined)[], labels: string[]): string {
  return histogramMean(
    (series) => `sum${by(vars, labels)} (${counterRate(series, vars)})`,
    (suffix) => selector(`${metric}${suffix}`, matchers),
    vars.nativeHistograms,
  );
}

/**
 * A counter's exact rise over a range: its last value in the range minus its last value before it, or its last value
 * where it restarted between the two.
 * With no value before it, the rise is the last value when the series was born in the range (Kubernetes
 * counters appear at their first count): its target was already scraped before the range, or its process
 * started within it. increase() extrapolates to the range's edges, so on real scrapes it is never a
 * whole count; it is left for series that reset in the range or whose start Prometheus never saw.
 */
export function exactIncrease(series: string, rangeSeconds: number): string {
  const range = promDuration(rangeSeconds);
  const last = `last_over_time(${series}[${range}])`;
  const before = `last_over_time(${series}[${range}] offset ${range})`;
  // Counters only rise, so a range whose lowest value is under the last one before it began after a restart at its
  // start, and counted only its last value (comparing the two ends would miss a new process that counted past the old).
  const lowest = `min_over_time(${series}[${range}])`;
  const wentOn = `(${last} - ${before}) and (${lowest} >= ${before})`;
  const restarted = `${last} * 1 and (${lowest} < ${before})`;
  const born = `${last} * 1 and on (job, instance) (last_over_time(up[${range}] offset ${range}) or last_over_time(process_start_time_seconds[${range}]) >= time() - ${Math.round(rangeSeconds)})`;
  return `(${wentOn} or ${restarted} or ${born}) unless resets(${series}[${range}]) > 0 or increase(${series}[${range}])`;
}
