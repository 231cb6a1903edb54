/**
 * Choosing a query step. Prometheus rejects more than 11,000 points per series and evaluates at
 * start, start+step, … without aligning, so the client picks a step no finer than the scrape
 * interval or the chart's pixels and aligns both ends to it: refreshes then hit the same
 * evaluation instants, and caches and links stay stable.
 */

/** Prometheus's hard limit on (end-start)/step. We stay well below it. */
export const PROMETHEUS_MAX_POINTS = 11_000;
const MAX_POINTS = 10_000;

// Steps people can read on an axis; a computed step is rounded up to the next one.
const NICE_STEPS_SECONDS = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1200, 1800, 3600, 7200, 10800, 21600, 43200, 86400];

export interface StepInput {
  startMs: number;
  endMs: number;
  /** Smallest useful step: the scrape interval. */
  minStepSeconds: number;
  /** About one point per pixel of chart width. */
  maxPoints: number;
  /** A step the caller asked for; never honoured below the limits above. */
  requestedStepSeconds?: number;
}

export function chooseStepSeconds(input: StepInput): number {
  const rangeSeconds = Math.max(0, (input.endMs - input.startMs) / 1000);
  const points = Math.min(Math.max(1, Math.floor(input.maxPoints)), MAX_POINTS);
  const byPixels = rangeSeconds / points;
  const floor = Math.max(input.minStepSeconds, byPixels, rangeSeconds / MAX_POINTS, 1);
  if (input.requestedStepSeconds !== undefined && input.requestedStepSeconds >= floor) {
    return Math.ceil(input.requestedStepSeconds);
  }
  const nice = NICE_STEPS_SECONDS.find((s) => s >= floor);
  return nice ?? Math.ceil(floor / 86400) * 86400;
}

export interface AlignedRange {
  startSeconds: number;
  endSeconds: number;
  stepSeconds: number;
}

/** Start rounded down and end rounded up to multiples of the step (epoch seconds). */
export function alignToStep(startMs: number, endMs: number, stepSeconds: number): AlignedRange {
  const startSeconds = Math.floor(startMs / 1000 / stepSeconds) * stepSeconds;
  const endSeconds = Math.ceil(endMs / 1000 / stepSeconds) * stepSeconds;
  return { startSeconds, endSeconds, stepSeconds };
}

/** The rate window for a step: at least four scrapes, and never shorter than the step so no sample is skipped. */
export function rateWindowSeconds(stepSeconds: number, scrapeIntervalSeconds: number): number {
  return Math.max(stepSeconds, 4 * scrapeIntervalSeconds);
}
