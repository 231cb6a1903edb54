/**
 * One object's timeline for a range, drawn at the chart's width: every write in the range counted into
 * the pixel column it falls in (by class), the most-changed fields' lanes, and the routed projection's
 * segments. The answer's size follows the width, not the number of writes, so a range with a hundred
 * thousand writes draws whole; a write's diff is fetched when it is picked. The store counts (in SQL);
 * this assembles the counts and merges the projection's changes to at most one segment per column.
 */
import type { WriteClass } from "../churn/write-class";
import { CLOCK_FAULTS, traitsOf } from "../churn/conditions";

/** Writes of one class in one column, as the store counts them. */
export interface ColumnCount {
  i: number;
  cls: WriteClass;
  n: number;
}

/** Writes with the same traits (churn/conditions.ts, as stored) in one column, as the store counts them. */
export interface TraitTick {
  i: number;
  traits: string;
  n: number;
}

/** A column's writes the timeline marks: echoes, writes that changed only clocks, writes that left a clock wrong. */
export interface MarkTick {
  i: number;
  echoes: number;
  clockOnly: number;
  clockFaults: number;
}

/** A write that changed the routed projection (JSON text, as stored), oldest first. */
export interface ProjectionChange {
  tsMs: number;
  projection: string;
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
  marks: MarkTick[];
}

/** More columns than any screen has pixels is not a drawing; fewer than one is not a timeline. */
export const MAX_TIMELINE_COLUMNS = 4_000;
/** Field lanes drawn under the writes. */
export const TIMELINE_LANES = 6;

/** The column a time falls in: floor((t − start) × columns ÷ span), the same arithmetic the store does in SQL. */
export function columnOf(tsMs: number, range: { startMs: number; endMs: number }, columns: number): number {
  return Math.min(columns - 1, Math.max(0, Math.floor(((tsMs - range.startMs) * columns) / (range.endMs - range.startMs))));
}

/**
 * Assembles a timeline from the store's counts: writes per column and class, the top lanes, and the
 * projection changes (oldest first, inside (startMs, endMs]). `initial` is the projection when the range
 * began (JSON text), or undefined when unknown.
 */
export function buildTimeline(
  input: { counts: Iterable<ColumnCount>; lanes: ObjectTimeline["lanes"]; changes: Iterable<ProjectionChange>; initial?: string; traits?: Iterable<TraitTick> },
  range: { startMs: number; endMs: number },
  columns: number,
): ObjectTimeline {
  const ticks = new Map<number, TimelineTick>();
  const byClass: Partial<Record<WriteClass, number>> = {};
  let total = 0;
  for (const { i, cls, n } of input.counts) {
    const tick = ticks.get(i) ?? { i, n: 0, byClass: {} };
    tick.n += n;
    tick.byClass[cls] = (tick.byClass[cls] ?? 0) + n;
    ticks.set(i, tick);
    byClass[cls] = (byClass[cls] ?? 0) + n;
    total += n;
  }
  const parse = (text: string | undefined) => (text === undefined ? null : (JSON.parse(text) as Record<string, string>));
  const segments: TimelineSegment[] = [];
  let segment: TimelineSegment = { fromMs: range.startMs, toMs: range.endMs, projection: parse(input.initial), changes: 0 };
  for (const change of input.changes) {
    // Changes within the column the segment began in are one drawn segment: its last value, and how many changes it hides.
    if (segment.changes > 0 && columnOf(segment.fromMs, range, columns) === columnOf(change.tsMs, range, columns)) {
      segment.projection = parse(change.projection);
      segment.changes++;
    } else {
      segments.push({ ...segment, toMs: change.tsMs });
      segment = { fromMs: change.tsMs, toMs: range.endMs, projection: parse(change.projection), changes: 1 };
    }
  }
  segments.push(segment);
  const marks = new Map<number, MarkTick>();
  for (const { i, traits, n } of input.traits ?? []) {
    const read = traitsOf(traits);
    const faults = (read.clocks?.findings ?? []).some((f) => CLOCK_FAULTS.includes(f.finding));
    if (!read.echo && !read.clocks?.clockOnly && !faults) continue;
    const mark = marks.get(i) ?? marks.set(i, { i, echoes: 0, clockOnly: 0, clockFaults: 0 }).get(i)!;
    if (read.echo) mark.echoes += n;
    if (read.clocks?.clockOnly) mark.clockOnly += n;
    if (faults) mark.clockFaults += n;
  }
  return {
    startMs: range.startMs,
    endMs: range.endMs,
    columns,
    total,
    byClass,
    ticks: [...ticks.values()].sort((a, b) => a.i - b.i),
    lanes: input.lanes,
    segments: segments.filter((s) => s.toMs > s.fromMs || s.changes > 0),
    marks: [...marks.values()].sort((a, b) => a.i - b.i),
  };
}
