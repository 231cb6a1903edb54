/** The range a page shows for its link: the link's own, or for a snapshot one of the snapshot's. */
import { parseRangeParams, resolveRange, type AbsoluteRange } from "../../time/range";
import { contains, MIN_ZOOM_SPAN_MS } from "../../time/zoom";
import type { SnapshotInfo } from "./schema";

/**
 * The held range a snapshot answers `range` from: the held range itself, or the shortest one it is zoomed
 * into (at least a minute wide); undefined when no held range contains it.
 */
export function holdingRange(ranges: readonly AbsoluteRange[], range: AbsoluteRange): AbsoluteRange | undefined {
  if (range.endMs - range.startMs < MIN_ZOOM_SPAN_MS) return ranges.find((r) => r.startMs === range.startMs && r.endMs === range.endMs);
  return ranges.filter((r) => contains(r, range)).sort((a, b) => a.endMs - a.startMs - (b.endMs - b.startMs))[0];
}

/** A snapshot answers its own ranges and zooms inside them: a link with another range opens the first one. */
export function snapshotRange(snapshot: SnapshotInfo | undefined, resolved: AbsoluteRange): AbsoluteRange {
  if (!snapshot) return resolved;
  return holdingRange(snapshot.ranges, resolved) ? { startMs: resolved.startMs, endMs: resolved.endMs } : snapshot.ranges[0];
}

/** The range a page shows for its link's `from` and `to` with "now" at `nowMs`: the page and its preloads both resolve it here. */
export function viewRange(from: string | undefined, to: string | undefined, nowMs: number, snapshot?: SnapshotInfo) {
  const { range, errors } = parseRangeParams(from, to);
  return { range, errors, ...snapshotRange(snapshot, resolveRange(range, nowMs)) };
}

/**
 * viewRange, or null when the page shows an error for the link instead (it then asks for its default
 * range, which is not worth preloading).
 */
export function linkRange(from: string | undefined, to: string | undefined, nowMs: number, snapshot?: SnapshotInfo): { startMs: number; endMs: number } | null {
  const { errors, startMs, endMs } = viewRange(from, to, nowMs, snapshot);
  return errors.length > 0 || startMs >= endMs ? null : { startMs, endMs };
}
