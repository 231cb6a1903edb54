/**
 * The compare view's answer: two counters counted in consecutive windows aligned to the window size
 * (3 h windows end at 00:00, 03:00, … UTC), the way the Connector churn write-up set them side by side. One range query
 * per counter, `sum(increase(selector[window]))` stepped by the window (on an engine that reads windows left-open, each
 * counter's rise: queries.ts counterRise), so each point is the count in the window that ends there.
 */
import { badRequest } from "../api/envelope";
import type { PromClient } from "../promql/types";
import { formatDurationMs } from "../time/duration";
import { counterRise, riseInfo } from "../panels/queries";
import type { WindowSemantics } from "../promql/flavor";
import { unique, type PanelResult } from "../panels/run-panel";
import { toSeries } from "../promql/to-series";
import { parseSelector } from "../promql/parse";
import { compareWindow } from "./catalog";

export interface CompareRequest {
  startMs: number;
  endMs: number;
  /** canonical selector texts */
  a: string;
  b: string;
  windowMs: number;
}

const MAX_WINDOWS = 2_000;

export const COMPARE_INFO =
  "Counts are increase() over each window. Prometheus 2.x with a sample on each window edge gives exact counts; otherwise increase() extrapolates to the edges.";

/** Validates the browser's a, b and window; a bad one is a 400 that says which and why. */
export function parseCompareArgs(params: Record<string, string | undefined>): Pick<CompareRequest, "a" | "b" | "windowMs"> {
  const side = (key: "a" | "b") => {
    const parsed = parseSelector(params[key] ?? "");
    if (!parsed.ok) throw badRequest(`parameter ${key}: ${parsed.error}`);
    return parsed.text;
  };
  const window = compareWindow(params.window ?? "3h");
  if (!window.ok) throw badRequest(`parameter window: ${window.error}`);
  return { a: side("a"), b: side("b"), windowMs: window.windowMs };
}

/** The whole windows inside [startMs, endMs], aligned to multiples of the window since the epoch. */
export function compareWindows(startMs: number, endMs: number, windowMs: number): { firstEndMs: number; lastEndMs: number; count: number } {
  const firstStart = Math.ceil(startMs / windowMs) * windowMs;
  const count = Math.floor((endMs - firstStart) / windowMs);
  return { firstEndMs: firstStart + windowMs, lastEndMs: firstStart + count * windowMs, count };
}

export function compareArgs(req: Pick<CompareRequest, "a" | "b" | "windowMs">): Record<string, string> {
  return { a: req.a, b: req.b, window: formatDurationMs(req.windowMs) };
}

export async function runCompare(
  client: PromClient,
  req: CompareRequest,
  windowSemantics: WindowSemantics = "closed",
  signal?: AbortSignal,
): Promise<PanelResult> {
  const windows = compareWindows(req.startMs, req.endMs, req.windowMs);
  const window = formatDurationMs(req.windowMs);
  if (windows.count < 1) throw badRequest(`the range holds no whole ${window} window aligned to ${window} boundaries: widen the range or shorten the window`);
  if (windows.count > MAX_WINDOWS) throw badRequest(`the range holds ${windows.count} windows of ${window}; at most ${MAX_WINDOWS}: use a longer window`);
  const stepSeconds = req.windowMs / 1000;
  const queries = [
    { name: "A", promql: `sum(${counterRise(req.a, stepSeconds, windowSemantics)})` },
    { name: "B", promql: `sum(${counterRise(req.b, stepSeconds, windowSemantics)})` },
  ];
  const range = { startSeconds: windows.firstEndMs / 1000, endSeconds: windows.lastEndMs / 1000, stepSeconds };
  const answers = await Promise.all(queries.map((q) => client.queryRange(q.promql, range, signal)));
  const ends = Array.from({ length: windows.count }, (_, i) => windows.firstEndMs + i * req.windowMs);
  // Every window gets a row: a window Prometheus has no sample for is a gap, not a missing row.
  const series = queries.map((q, i) => {
    const values = new Map(toSeries(answers[i].data)[0]?.points ?? []);
    return {
      labels: { series: q.name, selector: q.name === "A" ? req.a : req.b },
      points: ends.map((t): [number, number | null] => [t, values.get(t) ?? null]),
    };
  });
  return {
    data: {
      panel: "compare",
      title: `A vs B per ${window}`,
      unit: "count",
      query: queries[0].promql,
      queries,
      stepSeconds,
      startMs: windows.firstEndMs - req.windowMs,
      endMs: windows.lastEndMs,
      series,
    },
    warnings: unique(answers.flatMap((r) => r.warnings)),
    infos: unique([windowSemantics === "left-open" ? riseInfo("Counts", "window") : COMPARE_INFO, ...answers.flatMap((r) => r.infos)]),
  };
}
