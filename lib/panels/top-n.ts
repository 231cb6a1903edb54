/**
 * Keeps the N series with the largest area over the range and sums the rest, point by point, into
 * one "other" series. Done here rather than with PromQL topk(), which picks a different top set at
 * every step and makes stacked charts lie. A pinned series (the resource the page is about) is
 * always kept as itself, whatever its area.
 */
import type { Point, Series } from "../promql/types";

export const OTHER_LABEL = "__other__";

function area(series: Series): number {
  let sum = 0;
  for (const [, value] of series.points) if (value !== null && Number.isFinite(value)) sum += value;
  return sum;
}

export function topNWithOther(series: Series[], n: number, pinned: (labels: Record<string, string>) => boolean = () => false): Series[] {
  if (series.length <= n) return sortByArea(series);
  const ranked = sortByArea(series);
  const kept = ranked.filter((s, i) => i < n || pinned(s.labels));
  const rest = ranked.filter((s, i) => i >= n && !pinned(s.labels));
  if (rest.length === 0) return kept;
  const sums = new Map<number, number | null>();
  for (const s of rest) {
    for (const [ts, value] of s.points) {
      const previous = sums.get(ts);
      sums.set(ts, value === null ? (previous ?? null) : (previous ?? 0) + value);
    }
  }
  const points: Point[] = [...sums.entries()].sort((a, b) => a[0] - b[0]);
  kept.push({ labels: { [OTHER_LABEL]: String(rest.length) }, points });
  return kept;
}

function sortByArea(series: Series[]): Series[] {
  return series
    .map((s) => ({ s, a: area(s) }))
    .sort((x, y) => y.a - x.a || JSON.stringify(x.s.labels).localeCompare(JSON.stringify(y.s.labels)))
    .map((x) => x.s);
}
