/**
 * Zooming a chart's time range: a dragged selection becomes the page's range, and "Zoom out" doubles
 * it around its middle. Both stay inside `bounds` when a view can show only part of time (a snapshot
 * answers within the ranges it holds), and a zoom is never narrower than `minSpanMs`.
 */
import type { AbsoluteRange } from "./range";

/** Narrower than a minute, a range holds too few points at any step Prometheus is scraped with. */
export const MIN_ZOOM_SPAN_MS = 60_000;

/** Moves and trims `range` to lie inside `bounds`, keeping its length where it fits. */
function within(range: AbsoluteRange, bounds: AbsoluteRange | undefined): AbsoluteRange {
  if (!bounds) return range;
  const length = Math.min(range.endMs - range.startMs, bounds.endMs - bounds.startMs);
  const startMs = Math.min(Math.max(range.startMs, bounds.startMs), bounds.endMs - length);
  return { startMs, endMs: startMs + length };
}

/** The range a drag from `aMs` to `bMs` selects (either direction, cut to `bounds`), whole seconds, at least `minSpanMs` wide. */
export function zoomTo(aMs: number, bMs: number, bounds?: AbsoluteRange, minSpanMs = MIN_ZOOM_SPAN_MS): AbsoluteRange {
  let startMs = Math.floor(Math.max(Math.min(aMs, bMs), bounds?.startMs ?? -Infinity) / 1000) * 1000;
  let endMs = Math.ceil(Math.min(Math.max(aMs, bMs), bounds?.endMs ?? Infinity) / 1000) * 1000;
  if (endMs - startMs < minSpanMs) {
    const middleMs = Math.round((startMs + endMs) / 2000) * 1000;
    startMs = middleMs - minSpanMs / 2;
    endMs = startMs + minSpanMs;
  }
  return within({ startMs, endMs }, bounds);
}

/** Twice the range around its middle, never past `latestMs` (now, live) and inside `bounds`. */
export function zoomOut(range: AbsoluteRange, bounds?: AbsoluteRange, latestMs = Number.POSITIVE_INFINITY): AbsoluteRange {
  const length = range.endMs - range.startMs;
  let startMs = range.startMs - Math.floor(length / 2);
  let endMs = startMs + 2 * length;
  if (endMs > latestMs) {
    startMs -= endMs - latestMs;
    endMs = latestMs;
  }
  return within({ startMs, endMs }, bounds);
}

/** Whether `inner` lies wholly inside `outer`. */
export function contains(outer: AbsoluteRange, inner: AbsoluteRange): boolean {
  return inner.startMs >= outer.startMs && inner.endMs <= outer.endMs && inner.endMs > inner.startMs;
}
