/** The range a page shows for its link: the link's own, or for a snapshot one of the snapshot's. */
import { parseRangeParams, resolveRange } from "../../time/range";
import type { SnapshotInfo } from "./schema";

/** A snapshot answers only its own ranges: a link with another range opens the first one. */
export function snapshotRange(snapshot: SnapshotInfo | undefined, resolved: { startMs: number; endMs: number }) {
  if (!snapshot) return resolved;
  return snapshot.ranges.find((r) => r.startMs === resolved.startMs && r.endMs === resolved.endMs) ?? snapshot.ranges[0];
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
