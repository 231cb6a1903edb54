/**
 * The panel requests the Edge rebuilds page makes for one view state; the page and the snapshot
 * export both use this list. Sites are chosen in the browser: every panel answers for all sites.
 */
import { markersUrl, panelUrl, type ChartWidths, type PanelQueryInput } from "../panels/panel-url";
import type { PanelCall } from "../panels/write-load-requests";
import type { SnapshotInfo } from "../snapshot/format/schema";
import { linkRange } from "../snapshot/format/view-range";
import { parseAtParam, previousRange } from "../time/range";

export interface RebuildViewState {
  startMs: number;
  endMs: number;
  /** the time to compare before and after (e.g. the onset), inside the range */
  atMs?: number;
}

/** The page's range when its link names none. */
export const REBUILDS_DEFAULT_FROM = "now-24h";

export const REBUILD_CHARTS = [
  "rebuild-rate",
  "rebuild-duration-mean",
  "rebuild-slow-share",
  "rebuild-busy",
  "rebuild-duration-quantiles",
  "rebuild-backlog",
  "rebuild-stages",
  "rebuild-breakdown",
  "rebuild-amplification",
  "propagation",
] as const;

/** The page's calls, or (`PanelQueryInput`) its requests with their widths. */
export interface RebuildCalls<Call = PanelCall> {
  charts: Record<(typeof REBUILD_CHARTS)[number], Call>;
  summary: Call;
  summaryBefore: Call;
  /** only with a time inside the range: [start, at] and [at, end] */
  beforeAt?: Call;
  afterAt?: Call;
}

export function rebuildRequests({ startMs, endMs, atMs }: RebuildViewState): RebuildCalls {
  const charts = Object.fromEntries(REBUILD_CHARTS.map((panel) => [panel, { panel, startMs, endMs }])) as RebuildCalls["charts"];
  const previous = previousRange({ startMs, endMs });
  const inside = atMs !== undefined && atMs > startMs && atMs < endMs;
  return {
    charts,
    summary: { panel: "rebuild-summary", startMs, endMs },
    summaryBefore: { panel: "rebuild-summary", startMs: previous.startMs, endMs: previous.endMs },
    ...(inside ? { beforeAt: { panel: "rebuild-summary", startMs, endMs: atMs }, afterAt: { panel: "rebuild-summary", startMs: atMs, endMs } } : {}),
  };
}

export function rebuildCalls(state: RebuildViewState): PanelCall[] {
  return everyCall(rebuildRequests(state));
}

function everyCall<Call>(calls: RebuildCalls<Call>): Call[] {
  return [
    ...Object.values<Call>(calls.charts),
    calls.summary,
    calls.summaryBefore,
    ...(calls.beforeAt ? [calls.beforeAt] : []),
    ...(calls.afterAt ? [calls.afterAt] : []),
  ];
}

/** Points a summary table asks for: it reads one total per series, not a shape. */
const SUMMARY_WIDTH = 1000;

/** The page's requests as it sends them with charts `widths` wide: every chart half the page. The page and its preloads both take them from here. */
export function rebuildInputs(calls: RebuildCalls, widths: ChartWidths, snapshot?: string): RebuildCalls<PanelQueryInput> {
  const input = (call: PanelCall, width: number): PanelQueryInput => ({ ...call, width, snapshot });
  return {
    charts: Object.fromEntries(REBUILD_CHARTS.map((id) => [id, input(calls.charts[id], widths.half)])) as RebuildCalls<PanelQueryInput>["charts"],
    summary: input(calls.summary, SUMMARY_WIDTH),
    summaryBefore: input(calls.summaryBefore, SUMMARY_WIDTH),
    beforeAt: calls.beforeAt && input(calls.beforeAt, SUMMARY_WIDTH),
    afterAt: calls.afterAt && input(calls.afterAt, SUMMARY_WIDTH),
  };
}

/**
 * The URLs an Edge rebuilds page asks for with its link's parameters, with "now" at `nowMs`, when
 * its charts are `widths` wide (WIDTH_SLOTS: the templates the preload script fills in). None for a
 * range the page refuses.
 */
export function rebuildPreloads(search: { from?: string; to?: string; at?: string }, widths: ChartWidths, nowMs: number, snapshot?: SnapshotInfo): string[] {
  const range = linkRange(search.from ?? REBUILDS_DEFAULT_FROM, search.to, nowMs, snapshot);
  if (!range) return [];
  const panels = everyCall(rebuildInputs(rebuildRequests({ ...range, atMs: parseAtParam(search.at) }), widths, snapshot?.id)).map(panelUrl);
  return [...panels, markersUrl(range.startMs, range.endMs, snapshot?.id)];
}
