/** The range a page shows for its link: the link's own, or for a snapshot one of the snapshot's. */
import { parseRangeParams, resolveRange } from "../time/range";
import type { SnapshotInfo } from "./schema";

/** A snapshot answers only its own ranges: a link with another range opens the first one. */
export function snapshotRange(snapshot: SnapshotInfo | undefined, resolved: { startMs: number; endMs: number }) {
  if (!snapshot) return resolved;
  return snapshot.ranges.find((r) => r.startMs === resolved.startMs && r.endMs === resolved.endMs) ?? snapshot.ranges[0];
}

/**
 * The range a page resolves from its link's `from` and `to` with "now" at `nowMs`; null when the page
 * shows an error for them instead (it then asks for its default range, which is not worth preloading).
 */
export function linkRange(from: string | undefined, to: string | undefined, nowMs: number, snapshot?: SnapshotInfo): { startMs: number; endMs: number } | null {
  const { range, errors } = parseRangeParams(from, to);
  const resolved = snapshotRange(snapshot, resolveRange(range, nowMs));
  return errors.length > 0 || resolved.startMs >= resolved.endMs ? null : resolved;
}
