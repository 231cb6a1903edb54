/**
 * The panel requests the Edge rebuilds page makes for one view state; the page and the snapshot
 * export both use this list. Sites are chosen in the browser: every panel answers for all sites.
 */
import { previousRange } from "../time/range";
import type { PanelCall } from "../panels/write-load-requests";

export interface RebuildViewState {
  startMs: number;
  endMs: number;
  /** the time to compare before and after (e.g. the onset), inside the range */
  atMs?: number;
}

export const REBUILD_CHARTS = [
  "rebuild-rate",
  "rebuild-duration-mean",
  "rebuild-slow-share",
  "rebuild-busy",
  "rebuild-duration-quantiles",
  "rebuild-backlog",
  "rebuild-amplification",
  "propagation",
] as const;

export interface RebuildCalls {
  charts: Record<(typeof REBUILD_CHARTS)[number], PanelCall>;
  summary: PanelCall;
  summaryBefore: PanelCall;
  /** only with a time inside the range: [start, at] and [at, end] */
  beforeAt?: PanelCall;
  afterAt?: PanelCall;
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
  const calls = rebuildRequests(state);
  return [...Object.values(calls.charts), calls.summary, calls.summaryBefore, ...(calls.beforeAt ? [calls.beforeAt] : []), ...(calls.afterAt ? [calls.afterAt] : [])];
}
