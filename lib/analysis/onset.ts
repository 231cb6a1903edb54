/**
 * Onset detection: where a rate series shifted to a different level. Binary segmentation on the
 * mean: the split that best separates two levels, kept only when the shift is large against the
 * noise (a Welch t statistic) and both sides are long enough, then applied again to each side.
 * The onset is the earliest significant upward shift.
 */
import type { Series } from "../promql/types";

export interface ChangePoint {
  /** the first point of the new level */
  timeMs: number;
  before: number;
  after: number;
  /** Welch t statistic of the shift */
  score: number;
}

export interface Onset extends ChangePoint {
  /** the series whose level moved most across the onset, largest first */
  movers: { labels: Record<string, string>; before: number; after: number }[];
}

export interface OnsetOptions {
  /** minimum |t| for a shift to count; random noise over a thousand points stays well under 8 */
  minScore?: number;
  /** minimum points on each side (default: 6, or 3 % of the points when that is more) */
  minSegment?: number;
  /** minimum relative change of the level */
  minRatio?: number;
  maxChanges?: number;
  /**
   * How many consecutive points share data: a rate over a window of 4 steps makes neighbours
   * 3/4 the same, so there are 4 times fewer independent points than points.
   */
  overlap?: number;
}

const DEFAULTS: Required<Omit<OnsetOptions, "minSegment">> = { minScore: 8, minRatio: 0.5, maxChanges: 6, overlap: 1 };

/** Prefix sums of values and squares, so any segment's mean and variance cost O(1). */
interface Prefix {
  sum: Float64Array;
  squares: Float64Array;
}

function prefixOf(values: number[]): Prefix {
  const sum = new Float64Array(values.length + 1);
  const squares = new Float64Array(values.length + 1);
  values.forEach((v, i) => {
    sum[i + 1] = sum[i] + v;
    squares[i + 1] = squares[i] + v * v;
  });
  return { sum, squares };
}

function stats(prefix: Prefix, from: number, to: number) {
  const n = to - from;
  const mean = (prefix.sum[to] - prefix.sum[from]) / n;
  return { n, mean, variance: Math.max(0, (prefix.squares[to] - prefix.squares[from]) / n - mean * mean) };
}

type Settings = Required<OnsetOptions>;

/** The best single split of values[from, to), if it passes the thresholds. */
function bestSplit(times: number[], prefix: Prefix, from: number, to: number, o: Settings): (ChangePoint & { index: number }) | null {
  let best: (ChangePoint & { index: number }) | null = null;
  for (let k = from + o.minSegment; k <= to - o.minSegment; k++) {
    const left = stats(prefix, from, k);
    const right = stats(prefix, k, to);
    const spread = Math.sqrt((left.variance / left.n + right.variance / right.n) * Math.max(1, o.overlap));
    // A floor on the spread keeps a perfectly flat series from scoring infinity on a tiny step.
    const floor = 1e-9 + 1e-3 * Math.max(Math.abs(left.mean), Math.abs(right.mean));
    const score = Math.abs(right.mean - left.mean) / Math.max(spread, floor);
    if (!best || score > best.score) best = { index: k, timeMs: times[k], before: left.mean, after: right.mean, score };
  }
  if (!best || best.score < o.minScore) return null;
  // Relative to the lower level: a small wobble on a high level is not an onset.
  const low = Math.min(Math.abs(best.before), Math.abs(best.after));
  if (low > 0 && Math.abs(best.after - best.before) / low < o.minRatio) return null;
  return best;
}

/** Every significant level shift, in time order. */
export function changePoints(points: [number, number | null][], options: OnsetOptions = {}): ChangePoint[] {
  const clean = points.filter((p): p is [number, number] => p[1] !== null && Number.isFinite(p[1]));
  // Short segments of noisy data can look like a level of their own: ask for a few percent of the range.
  const o: Settings = { ...DEFAULTS, minSegment: Math.max(6, Math.ceil(clean.length * 0.03)), ...options };
  const times = clean.map((p) => p[0]);
  const values = clean.map((p) => p[1]);
  const prefix = prefixOf(values);
  const found: (ChangePoint & { index: number })[] = [];
  const queue: [number, number][] = [[0, values.length]];
  while (queue.length > 0 && found.length < o.maxChanges) {
    const [from, to] = queue.shift()!;
    const split = bestSplit(times, prefix, from, to, o);
    if (!split) continue;
    found.push(split);
    queue.push([from, split.index], [split.index, to]);
  }
  return found.sort((a, b) => a.timeMs - b.timeMs).map(({ index: _index, ...rest }) => rest);
}

/** Adds series point by point (missing points count as 0 where another series has a value). */
export function sumSeries(series: Series[]): [number, number | null][] {
  const totals = new Map<number, number>();
  for (const s of series) for (const [t, v] of s.points) if (v !== null) totals.set(t, (totals.get(t) ?? 0) + v);
  return [...totals.entries()].sort((a, b) => a[0] - b[0]);
}

function meanBetween(points: [number, number | null][], fromMs: number, toMs: number): number {
  const values = points.filter(([t, v]) => t >= fromMs && t < toMs && v !== null).map(([, v]) => v as number);
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
}

const mean = (points: [number, number | null][]) => {
  const values = points.map((p) => p[1]).filter((v): v is number => v !== null);
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : 0;
};

/**
 * The earliest significant rise: of the total (by at least 20 %), or of any series that carries at
 * least 2 % of it (by at least 50 %), since a tenfold rise of one resource can be a modest rise of
 * the total. Before/after are the total's levels around it; movers are the series that rose most.
 */
export function detectOnset(series: Series[], options: OnsetOptions = {}): Onset | null {
  const total = sumSeries(series);
  const totalMean = mean(total);
  const candidates: ChangePoint[] = [];
  const rise = (points: ChangePoint[]) => points.find((p) => p.after > p.before);
  const around = changePoints(total, { minRatio: 0.2, ...options });
  const totalRise = rise(around);
  if (totalRise) candidates.push(totalRise);
  for (const s of series) {
    if (mean(s.points) < 0.02 * totalMean) continue;
    const r = rise(changePoints(s.points, options));
    if (r) candidates.push(r);
  }
  if (candidates.length === 0) return null;
  const onset = candidates.sort((a, b) => a.timeMs - b.timeMs || b.score - a.score)[0];
  // The total's level on either side, up to its neighbouring changes.
  const from = Math.max(-Infinity, ...around.filter((p) => p.timeMs < onset.timeMs).map((p) => p.timeMs));
  const to = Math.min(Infinity, ...around.filter((p) => p.timeMs > onset.timeMs).map((p) => p.timeMs));
  const movers = series
    .map((s) => ({ labels: s.labels, before: meanBetween(s.points, from, onset.timeMs), after: meanBetween(s.points, onset.timeMs, to) }))
    .filter((m) => m.after - m.before > 0)
    .sort((a, b) => b.after - b.before - (a.after - a.before))
    .slice(0, 3);
  return { timeMs: onset.timeMs, score: onset.score, before: meanBetween(total, from, onset.timeMs), after: meanBetween(total, onset.timeMs, to), movers };
}

/** The window a rate query was read over, from its PromQL (`[120s]`), else one step. */
export function rateWindowOf(data: { query: string; stepSeconds: number }): number {
  return Number(/\[(\d+)s\]/.exec(data.query)?.[1] ?? data.stepSeconds);
}

/**
 * Where a rate climbing from `before` to `after` crossed halfway: between the two points either side of the half
 * level nearest the split, in proportion. A rate over a window climbs across the whole window, so this is half a
 * window after the rise began, to well within a step.
 */
function halfwayMs(points: [number, number | null][], split: ChangePoint): number {
  const half = (split.before + split.after) / 2;
  let best: number | undefined;
  for (let i = 1; i < points.length; i++) {
    const [t0, v0] = points[i - 1];
    const [t1, v1] = points[i];
    if (v0 === null || v1 === null || v0 >= half || v1 < half) continue;
    const crossing = t0 + ((half - v0) / (v1 - v0)) * (t1 - t0);
    if (best === undefined || Math.abs(crossing - split.timeMs) < Math.abs(best - split.timeMs)) best = crossing;
  }
  return best ?? split.timeMs;
}

/**
 * The minute a rise began, read from a rate chart around it: the largest rise of one series that began between
 * `fromMs` and `toMs` (a series can rise tenfold inside a modest total), else the total's. Read at the finest step
 * the data has, every view of the same rise names the same minute. Null when none rises there.
 */
export function riseStartMs(chart: { series: Series[]; stepSeconds: number; windowSeconds: number }, fromMs: number, toMs: number): number | null {
  // The chart is already known to rise here: a shift a third as sure as a detection's is enough to place it.
  const options = { maxChanges: 1, minSegment: 2, minRatio: 0.2, minScore: 3, overlap: chart.windowSeconds / chart.stepSeconds };
  const largestRise = (charts: [number, number | null][][]) =>
    charts
      .flatMap((points) =>
        changePoints(points, options).map((split) => ({ ...split, startMs: roundToMinute(halfwayMs(points, split) - (chart.windowSeconds * 1000) / 2) })),
      )
      .filter((p) => p.after > p.before && p.startMs >= roundToMinute(fromMs) && p.startMs <= toMs)
      .sort((a, b) => b.after - b.before - (a.after - a.before))[0];
  // The total only when no one series rose: its noise is every series' noise.
  return (largestRise(chart.series.map((s) => s.points)) ?? largestRise([sumSeries(chart.series)]))?.startMs ?? null;
}

export const roundToMinute = (ms: number) => Math.round(ms / 60_000) * 60_000;
