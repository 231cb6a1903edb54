/** Legend names from series labels, and series → chart columns (one entry per timestamp). */
import type { Series } from "../promql/types";
import { OTHER_LABEL } from "./top-n";
import { joinResource } from "./resource-name";

export function seriesName(labels: Record<string, string>): string {
  if (labels[OTHER_LABEL] !== undefined) return `other (${labels[OTHER_LABEL]} more)`;
  const parts: string[] = [];
  if (labels.series) parts.push(labels.series);
  if (labels.job) parts.push(labels.job);
  if (labels.flow_schema) parts.push(labels.flow_schema);
  if (labels.resource !== undefined) parts.push(joinResource(labels.resource, labels.group));
  else if (labels.kind !== undefined) parts.push(labels.group ? `${labels.kind}.${labels.group}` : labels.kind);
  if (labels.verb) parts.push(labels.subresource ? `${labels.verb} ${labels.subresource}` : labels.verb);
  if (labels.code) parts.push(`code ${labels.code}`);
  if (parts.length === 0) {
    const rest = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
    return rest.length ? rest.join(", ") : "total";
  }
  return parts.join(" · ");
}

/** A chart's data by column: the union of the series' timestamps, and each series' values at them. */
export interface ChartColumns {
  xs: number[];
  /** ys[i][j]: series i at xs[j]; null where the series has no point, so the chart shows a gap */
  ys: (number | null)[][];
}

export function toColumns(series: Series[]): ChartColumns {
  // Every timestamp in a typed array, sorted natively and deduplicated: a page draws tens of thousands of points.
  let count = 0;
  for (const s of series) count += s.points.length;
  const times = new Float64Array(count);
  let at = 0;
  for (const s of series) for (const [tsMs] of s.points) times[at++] = tsMs;
  times.sort();
  const xs: number[] = [];
  for (let i = 0; i < count; i++) if (i === 0 || times[i] !== times[i - 1]) xs.push(times[i]);
  const ys = series.map((s) => {
    const column = new Array<number | null>(xs.length).fill(null);
    // A series' points come in time order: each is found by walking on from the last; one out of order, by search.
    let j = 0;
    for (const [tsMs, value] of s.points) {
      if (j >= xs.length || xs[j] > tsMs) j = lowerBound(xs, tsMs);
      while (xs[j] < tsMs) j++;
      column[j] = value;
    }
    return column;
  });
  return { xs, ys };
}

/** The first index whose value is not below `value`, in ascending `sorted`. */
function lowerBound(sorted: number[], value: number): number {
  let [low, high] = [0, sorted.length];
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle] < value) low = middle + 1;
    else high = middle;
  }
  return low;
}

/**
 * Running totals for stacked areas: series i at j is the sum of series 0..i there. A gap stays a
 * gap (the series is not drawn there) and adds nothing to the series above it.
 */
export function stackColumns(ys: (number | null)[][]): (number | null)[][] {
  const below = new Array<number>(ys[0]?.length ?? 0).fill(0);
  return ys.map((column) =>
    column.map((value, j) => {
      if (value === null || !Number.isFinite(value)) return null;
      below[j] += value;
      return below[j];
    }),
  );
}
