/**
 * One object's timeline for a range, drawn at the chart's width: every write in the range counted into
 * the pixel column it falls in (by class), the most-changed fields' lanes, and the routed projection's
 * segments. The answer's size follows the width, not the number of writes, so a range with a hundred
 * thousand writes draws whole; a write's diff is fetched when it is picked.
 */
import type { WriteClass } from "../churn/analyze";

/** One stored write as the timeline reads it: no bodies, no values, only what it draws. */
export interface TimelineRow {
  tsMs: number;
  cls: WriteClass;
  /** the routed projection after the write, as stored (JSON text) */
  projection: string;
}

/** One field a write changed. */
export interface TimelineChange {
  tsMs: number;
  path: string;
}

/** A pixel column with writes in it. */
export interface TimelineTick {
  /** column index, 0 … columns − 1 */
  i: number;
  n: number;
  byClass: Partial<Record<WriteClass, number>>;
}

/** A stretch with one routed projection; `changes` > 1 when it changed more often than once within its first column. */
export interface TimelineSegment {
  fromMs: number;
  toMs: number;
  projection: Record<string, string> | null;
  changes: number;
}

export interface ObjectTimeline {
  startMs: number;
  endMs: number;
  columns: number;
  total: number;
  byClass: Partial<Record<WriteClass, number>>;
  ticks: TimelineTick[];
  lanes: { path: string; changes: number; ticks: [i: number, n: number][] }[];
  segments: TimelineSegment[];
}

/** More columns than any screen has pixels is not a drawing; fewer than one is not a timeline. */
export const MAX_TIMELINE_COLUMNS = 4_000;
/** Field lanes drawn under the writes. */
export const TIMELINE_LANES = 6;
/** Fields counted per column; the rest still count towards the writes, not towards a lane. */
const MAX_TRACKED_PATHS = 1_000;

/**
 * Counts `rows` (oldest first) and the fields they changed, all inside (startMs, endMs], into `columns`
 * columns. `initial` is the projection when the range began (JSON text), or undefined when unknown.
 */
export function buildTimeline(
  rows: Iterable<TimelineRow>,
  changes: Iterable<TimelineChange>,
  range: { startMs: number; endMs: number },
  columns: number,
  initial?: string,
): ObjectTimeline {
  const span = range.endMs - range.startMs;
  const columnOf = (tsMs: number) => Math.min(columns - 1, Math.max(0, Math.floor(((tsMs - range.startMs) / span) * columns)));
  const ticks = new Map<number, TimelineTick>();
  const byClass: Partial<Record<WriteClass, number>> = {};
  const byPath = new Map<string, { changes: number; columns: Map<number, number> }>();
  const parse = (text: string | undefined) => (text === undefined ? null : (JSON.parse(text) as Record<string, string>));
  const segments: TimelineSegment[] = [];
  let current = initial;
  let segment: TimelineSegment = { fromMs: range.startMs, toMs: range.endMs, projection: parse(initial), changes: 0 };
  let total = 0;
  for (const row of rows) {
    total++;
    const i = columnOf(row.tsMs);
    const tick = ticks.get(i) ?? { i, n: 0, byClass: {} };
    tick.n++;
    tick.byClass[row.cls] = (tick.byClass[row.cls] ?? 0) + 1;
    ticks.set(i, tick);
    byClass[row.cls] = (byClass[row.cls] ?? 0) + 1;
    if (row.projection !== current) {
      current = row.projection;
      // Changes within the column the segment began in are one drawn segment: its last value, and how many changes it hides.
      if (segment.changes > 0 && columnOf(segment.fromMs) === i) {
        segment.projection = parse(current);
        segment.changes++;
      } else {
        segments.push({ ...segment, toMs: row.tsMs });
        segment = { fromMs: row.tsMs, toMs: range.endMs, projection: parse(current), changes: 1 };
      }
    }
  }
  segments.push(segment);
  for (const change of changes) {
    let lane = byPath.get(change.path);
    if (!lane && byPath.size < MAX_TRACKED_PATHS) byPath.set(change.path, (lane = { changes: 0, columns: new Map() }));
    if (!lane) continue;
    const i = columnOf(change.tsMs);
    lane.changes++;
    lane.columns.set(i, (lane.columns.get(i) ?? 0) + 1);
  }
  const lanes = [...byPath.entries()]
    .sort((a, b) => b[1].changes - a[1].changes || (a[0] < b[0] ? -1 : 1))
    .slice(0, TIMELINE_LANES)
    .map(([path, lane]) => ({ path, changes: lane.changes, ticks: [...lane.columns.entries()].sort((a, b) => a[0] - b[0]) }));
  return {
    startMs: range.startMs,
    endMs: range.endMs,
    columns,
    total,
    byClass,
    ticks: [...ticks.values()].sort((a, b) => a.i - b.i),
    lanes,
    segments: segments.filter((s) => s.toMs > s.fromMs || s.changes > 0),
  };
}
