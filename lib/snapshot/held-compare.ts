/**
 * A comparison a snapshot can answer from one it holds: the same two counters the other way round, or per a
 * longer window made of whole held windows (6 h windows from 3 h ones: both are aligned to multiples of their
 * length since the epoch, so each 6 h window is exactly two 3 h ones). A window any part of which the snapshot
 * does not hold is a gap, never a guess.
 */
import type { PanelResult } from "../panels/run-panel";
import { compareWindows } from "../compare/compare";
import { formatDurationMs, parseDurationMs } from "../time/duration";
import type { Series } from "../promql/types";

export interface HeldComparison {
  a: string;
  b: string;
  window: string;
  result: PanelResult;
}

/** The held comparison's counts for `selector` by window end, or undefined when it counts neither side. */
function countsOf(held: HeldComparison, selector: string): Map<number, number | null> | undefined {
  const side = held.a === selector ? "A" : held.b === selector ? "B" : undefined;
  const series = side && held.result.data.series.find((s) => s.labels.series === side);
  return series ? new Map(series.points) : undefined;
}

export function derivedComparison(
  held: readonly HeldComparison[],
  call: { startMs: number; endMs: number; a: string; b: string; window: string },
): PanelResult | undefined {
  const windowMs = parseDurationMs(call.window);
  if (windowMs === null) return undefined;
  for (const h of held) {
    const heldMs = parseDurationMs(h.window);
    const pair = (h.a === call.a && h.b === call.b) || (h.a === call.b && h.b === call.a);
    if (heldMs === null || !pair || windowMs % heldMs !== 0) continue;
    const a = countsOf(h, call.a)!;
    const b = countsOf(h, call.b)!;
    const windows = compareWindows(call.startMs, call.endMs, windowMs);
    if (windows.count < 1) continue;
    const parts = windowMs / heldMs;
    const ends = Array.from({ length: windows.count }, (_, i) => windows.firstEndMs + i * windowMs);
    // A window's count: its held parts summed, or a gap when one of them is not held.
    const sum = (counts: Map<number, number | null>, endMs: number): number | null => {
      let total = 0;
      for (let k = 0; k < parts; k++) {
        const value = counts.get(endMs - k * heldMs);
        if (value === undefined || value === null) return null;
        total += value;
      }
      return total;
    };
    const series: Series[] = [
      { labels: { series: "A", selector: call.a }, points: ends.map((e) => [e, sum(a, e)]) },
      { labels: { series: "B", selector: call.b }, points: ends.map((e) => [e, sum(b, e)]) },
    ];
    const how =
      parts === 1
        ? `the snapshot's ${h.window} comparison of the same counters, the other way round`
        : `the snapshot's ${h.window} windows, ${parts} to each ${formatDurationMs(windowMs)} window`;
    return {
      data: {
        ...h.result.data,
        title: `A vs B per ${call.window}`,
        stepSeconds: windowMs / 1000,
        startMs: windows.firstEndMs - windowMs,
        endMs: windows.lastEndMs,
        series,
      },
      warnings: h.result.warnings,
      infos: [...h.result.infos, `Counted from ${how}.`],
    };
  }
  return undefined;
}
