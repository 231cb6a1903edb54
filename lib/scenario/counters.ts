/**
 * Counter series sampled on a fixed scrape grid, generated from per-interval increments. The
 * generator keeps every cumulative value, so tests can compute ground truth (the exact number of
 * events between two scrapes) without asking Prometheus.
 */
import type { Rng } from "./rng";

export interface CounterSpec {
  /** Metric name as exposed, e.g. apiserver_request_total. */
  name: string;
  labels: Record<string, string>;
  /** Events in the scrape interval ending at tSeconds (a whole number ≥ 0). */
  increment: (tSeconds: number, rng: Rng) => number;
}

export interface CounterSeries {
  name: string;
  labels: Record<string, string>;
  /** How the series is typed in OpenMetrics; counter when absent. */
  kind?: "counter" | "gauge" | "histogram" | "summary";
  /** The metric family for histogram parts (x_bucket, x_sum, x_count → x). */
  family?: string;
  startSeconds: number;
  intervalSeconds: number;
  /** Cumulative value at startSeconds + i × intervalSeconds; the first sample is 0. */
  values: Float64Array;
}

export interface Grid {
  startSeconds: number;
  endSeconds: number;
  intervalSeconds: number;
}

export function sampleCounters(specs: CounterSpec[], grid: Grid, rng: Rng): CounterSeries[] {
  const count = Math.floor((grid.endSeconds - grid.startSeconds) / grid.intervalSeconds) + 1;
  return specs.map((spec) => {
    const values = new Float64Array(count);
    for (let i = 1; i < count; i++) {
      const step = spec.increment(grid.startSeconds + i * grid.intervalSeconds, rng);
      if (!(step >= 0) || !Number.isInteger(step)) throw new Error(`${spec.name}: increment must be a whole number ≥ 0, got ${step}`);
      values[i] = values[i - 1] + step;
    }
    return { name: spec.name, labels: spec.labels, startSeconds: grid.startSeconds, intervalSeconds: grid.intervalSeconds, values };
  });
}

/** Cumulative value of a series at a scrape time on its grid. */
export function valueAt(series: CounterSeries, tSeconds: number): number {
  const offset = (tSeconds - series.startSeconds) / series.intervalSeconds;
  if (!Number.isInteger(offset) || offset < 0 || offset >= series.values.length) {
    throw new Error(`${tSeconds} is not a scrape time of ${series.name}`);
  }
  return series.values[offset];
}

/** Events in (fromSeconds, toSeconds]: the exact answer an increase() over that window should give. */
export function eventsBetween(series: CounterSeries, fromSeconds: number, toSeconds: number): number {
  return valueAt(series, toSeconds) - valueAt(series, fromSeconds);
}
