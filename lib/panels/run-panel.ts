/** Runs one catalog panel against Prometheus and returns it in domain shape for the JSON API. */
import { CLOSED_PROMETHEUS, engineInfos, hasNativeHistograms, type EngineTraits } from "../promql/flavor";
import type { PromClient } from "../promql/types";
import { toSeries } from "../promql/to-series";
import type { Series } from "../promql/types";
import { alignToStep, chooseStepSeconds, PROMETHEUS_MAX_POINTS, rateWindowSeconds } from "../time/step";
import { badRequest } from "../api/envelope";
import type { NamedQuery, PanelDef, Unit } from "./queries";
import type { PanelRequest } from "./params";
import { probeLabelSets, type LabelSets } from "./probe";
import { topNWithOther } from "./top-n";

export interface PanelData {
  panel: string;
  title: string;
  unit: Unit;
  /** The PromQL sent (the first query when a panel sends several; all are in `queries`). */
  query: string;
  queries: { name?: string; promql: string }[];
  stepSeconds: number;
  startMs: number;
  endMs: number;
  series: Series[];
  estimate?: string;
  /** which rebuild metric profile answered, and why it was chosen */
  profile?: { id: string; title: string; reason: string };
  /** horizontal lines worth drawing, e.g. 1.0 = saturated, or the top finite bucket */
  thresholds?: { value: number; label: string }[];
  /** Nothing to draw here, and the infos say why: drawn as one line, not an empty chart. */
  nothingToDraw?: true;
}

export interface PanelResult {
  data: PanelData;
  warnings: string[];
  infos: string[];
}

export interface PanelDeps {
  client: PromClient;
  scrapeIntervalSeconds: number;
  /** Label-set probe, injectable so callers can cache it. */
  probe?: (job: string | undefined, bounds: { startSeconds: number; endSeconds: number }, signal?: AbortSignal) => Promise<LabelSets>;
  /** which engine answers and how it reads windows (flavor.ts), asked once; Prometheus 2's when not given */
  engine?: (signal?: AbortSignal) => Promise<EngineTraits>;
  /** the labels that tell components apart in client-go's own metrics (configuration `componentLabels`) */
  componentLabels?: string[];
}

/** Step, aligned bounds and windows for a panel request (a total is one step over the whole range). */
export function planPanel(mode: "range" | "total", req: PanelRequest, scrapeIntervalSeconds: number) {
  const stepSeconds =
    mode === "total"
      ? Math.max(1, Math.round((req.endMs - req.startMs) / 1000))
      : chooseStepSeconds({
          startMs: req.startMs,
          endMs: req.endMs,
          minStepSeconds: scrapeIntervalSeconds,
          maxPoints: req.width,
          requestedStepSeconds: req.requestedStepSeconds,
        });
  const aligned = alignToStep(req.startMs, req.endMs, stepSeconds);
  // A total is evaluated at `to` rounded down to the scrape interval, so everyone who opens the same
  // "last 6 h" link within one interval asks Prometheus the same question (and shares one answer).
  const scrapeMs = scrapeIntervalSeconds * 1000;
  const evalMs = Math.floor(req.endMs / scrapeMs) * scrapeMs;
  return {
    stepSeconds,
    aligned,
    evalMs,
    bounds: { startSeconds: aligned.startSeconds, endSeconds: aligned.endSeconds },
    windowSeconds: rateWindowSeconds(stepSeconds, scrapeIntervalSeconds),
    // Totals cover the range's whole length, ending at evalMs.
    rangeSeconds: stepSeconds,
  };
}

export type PanelPlan = ReturnType<typeof planPanel>;

/** How many of one panel's queries are sent at once. */
export const PANEL_QUERY_PARALLELISM = 2;

/** Sends a panel's queries and merges their answers; several queries are told apart by a `series` label. */
export async function executeQueries(
  client: PromClient,
  mode: "range" | "total",
  plan: PanelPlan,
  req: PanelRequest,
  queries: NamedQuery[],
  signal?: AbortSignal,
): Promise<{ series: Series[]; warnings: string[]; infos: string[] }> {
  const send = (q: NamedQuery) => (mode === "total" ? client.query(q.promql, plan.evalMs / 1000, signal) : client.queryRange(q.promql, plan.aligned, signal));
  // Two at a time: a panel of many lines must never need more of Prometheus's query slots than a small pool has.
  const results: Awaited<ReturnType<typeof send>>[] = [];
  for (let i = 0; i < queries.length; i += PANEL_QUERY_PARALLELISM)
    results.push(...(await Promise.all(queries.slice(i, i + PANEL_QUERY_PARALLELISM).map(send))));
  const warnings: string[] = [];
  const infos: string[] = [];
  const series: Series[] = [];
  results.forEach((result, i) => {
    warnings.push(...result.warnings);
    infos.push(...result.infos);
    const { name, whenEmpty } = queries[i];
    const answered = toSeries(result.data);
    if (answered.length === 0 && whenEmpty) infos.push(whenEmpty);
    for (const s of answered) series.push(name ? { ...s, labels: { series: name, ...s.labels } } : s);
  });
  return { series, warnings, infos };
}

/**
 * Whether a panel has nothing to draw for a reason its infos state: it asks nothing here (a gateway
 * that does not time a stage), or every query it sent names a family that is not scraped here.
 */
export function nothingToDraw(queries: NamedQuery[], series: Series[]): boolean {
  return series.length === 0 && queries.every((q) => q.whenEmpty !== undefined);
}

/** What the answer says was sent: each query's name and PromQL. */
export const sentQueries = (queries: NamedQuery[]) => queries.map(({ name, promql }) => (name === undefined ? { promql } : { name, promql }));

/** The data envelope's time fields: the window a total covered, or a chart's aligned range. */
export function panelTimes(mode: "range" | "total", plan: PanelPlan) {
  return {
    stepSeconds: plan.stepSeconds,
    startMs: mode === "total" ? plan.evalMs - plan.rangeSeconds * 1000 : plan.aligned.startSeconds * 1000,
    endMs: mode === "total" ? plan.evalMs : plan.aligned.endSeconds * 1000,
  };
}

/** A panel that shows one resource is asked for one, whether a snapshot or Prometheus answers. */
export function requireResource(panel: PanelDef, resource: string | undefined): void {
  if (panel.needsResource && resource === undefined)
    throw badRequest(`panel ${panel.id} shows one resource: add the parameter resource, e.g. resource=connectors`);
}

export async function runPanel(deps: PanelDeps, panel: PanelDef, req: PanelRequest, signal?: AbortSignal): Promise<PanelResult> {
  requireResource(panel, req.resource);
  const plan = planPanel(panel.mode, req, deps.scrapeIntervalSeconds);
  const probe = deps.probe ?? ((job, b, s) => probeLabelSets(deps.client, job, b, s));
  const [labelSets, engine] = await Promise.all([probe(req.job, plan.bounds, signal), deps.engine?.(signal) ?? CLOSED_PROMETHEUS]);
  const { queries, infos } = panel.queries({
    job: req.job,
    resource: req.resource,
    group: req.group,
    windowSeconds: plan.windowSeconds,
    rangeSeconds: plan.rangeSeconds,
    labelSets,
    nativeHistograms: hasNativeHistograms(engine.flavor),
    windows: engine.windows,
    includeDryRun: req.includeDryRun,
    componentLabels: deps.componentLabels,
  });
  const answer = await executeQueries(deps.client, panel.mode, plan, req, queries, signal);
  // The resource the page is about stays its own series, never folded into "other".
  const selected = (labels: Record<string, string>) =>
    panel.resourcePinsSeries === true &&
    req.resource !== undefined &&
    labels.resource === req.resource &&
    (req.group === undefined || (labels.group ?? "") === req.group);
  const largest = panel.largest !== undefined && answer.series.length > panel.largest ? largestSeries(answer.series, panel.largest) : answer.series;
  const limited = limitSeries(panel.topN !== undefined ? topNWithOther(largest, panel.topN, selected) : largest);
  const series = limited.series;
  return {
    data: {
      panel: panel.id,
      title: panel.title,
      unit: panel.unit,
      query: queries[0]?.promql ?? "",
      queries: sentQueries(queries),
      ...panelTimes(panel.mode, plan),
      series,
      ...(panel.estimate ? { estimate: panel.estimate } : {}),
      ...(nothingToDraw(queries, answer.series) ? { nothingToDraw: true as const } : {}),
    },
    warnings: unique([...limited.warnings, ...answer.warnings]),
    infos: unique([
      ...infos,
      ...answer.infos,
      ...engineInfos(engine, plan.stepSeconds, panel.mode === "range"),
      ...(largest !== answer.series ? [`The ${panel.largest} largest of ${answer.series.length} series; pick a resource to see its own.`] : []),
    ]),
  };
}

/**
 * The most series a panel passes on (Grafana and Prometheus's UI cap what they draw too): past it, the
 * ones with the largest totals, in their order, and a warning that says how many were left out.
 */
export const MAX_PANEL_SERIES = 100;
/** The most points a series may have: what Prometheus itself answers at most (a proxy or another server may send more). */
export const MAX_SERIES_POINTS = PROMETHEUS_MAX_POINTS;

export function limitSeries(series: Series[], max = MAX_PANEL_SERIES): { series: Series[]; warnings: string[] } {
  const warnings: string[] = [];
  let kept = series;
  if (series.length > max) {
    kept = largestSeries(series, max);
    warnings.push(`Showing the ${max} series with the largest values of ${series.length}: narrow the selection to see the rest.`);
  }
  if (kept.some((s) => s.points.length > MAX_SERIES_POINTS)) {
    kept = kept.map((s) => (s.points.length > MAX_SERIES_POINTS ? { ...s, points: s.points.slice(0, MAX_SERIES_POINTS) } : s));
    warnings.push(
      `Prometheus answered more than ${MAX_SERIES_POINTS.toLocaleString("en-US")} points for a series; the first ${MAX_SERIES_POINTS.toLocaleString("en-US")} are shown.`,
    );
  }
  return { series: kept, warnings };
}

/** The `max` series with the largest totals, in their order. */
export function largestSeries(series: Series[], max: number): Series[] {
  const total = (s: Series) => s.points.reduce((sum, [, v]) => sum + (v !== null && Number.isFinite(v) ? Math.abs(v) : 0), 0);
  const largest = new Set(
    series
      .map((s, i) => ({ i, t: total(s) }))
      .sort((a, b) => b.t - a.t || a.i - b.i)
      .slice(0, max)
      .map((e) => e.i),
  );
  return series.filter((_, i) => largest.has(i));
}

export function unique(values: string[]): string[] {
  return [...new Set(values)];
}
