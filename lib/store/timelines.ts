/**
 * One object's writes as its timeline page reads them: all of a range counted per pixel column (no
 * write returned whole), one write in full when it is picked (by seq, or the nearest to a time) with
 * its place among the range's writes, and the projection the range began with.
 */
import type { FieldChange } from "../churn/diff";
import type { WriteClass } from "../churn/analyze";
import {
  buildTimeline,
  columnOf,
  TIMELINE_LANES,
  type ColumnCount,
  type ObjectTimeline,
  type ProjectionChange,
  type TimelineSegment,
} from "../objects/timeline";
import type { NoopEvidence } from "../churn/preconditions";
import type { ObjectKey, PickedWriteAnswer, StoredWrite } from "../wire/objects";
import type { StoreDatabase } from "./database";
import { MOVES } from "./moves";

export type WritePick = { seq: number } | { nearMs: number };

const WRITE_COLUMNS = "id, ts_ms, rv, class, writer, source, heartbeat, changes, projection, verb, subresource, user_agent, code, latency_ms, request_key";

function storedWrite(r: Record<string, string | number | null>): StoredWrite & { seq: number } {
  return {
    seq: r.id as number,
    tsMs: r.ts_ms as number,
    ...(r.rv ? { resourceVersion: r.rv as string } : {}),
    cls: r.class as WriteClass,
    writer: r.writer as string,
    source: r.source as StoredWrite["source"],
    heartbeat: r.heartbeat === 1,
    changes: JSON.parse(r.changes as string) as FieldChange[],
    projection: JSON.parse(r.projection as string) as Record<string, string>,
    ...(r.verb === null
      ? {}
      : {
          request: {
            verb: r.verb as string,
            subresource: (r.subresource as string | null) ?? "",
            userAgent: (r.user_agent as string | null) ?? "",
            code: (r.code as number | null) ?? 0,
            latencyMs: r.latency_ms as number | null,
          },
        }),
  };
}

/** The range's first write counts as a change only when it differs from the projection the range began with. */
function* firstDiffering(changes: Iterable<ProjectionChange>, initial: string | undefined): Generator<ProjectionChange> {
  let first = true;
  for (const change of changes) {
    if (!(first && change.projection === initial)) yield change;
    first = false;
  }
}

export class Timelines {
  constructor(private readonly database: StoreDatabase) {}

  /** One object's writes in (from, to], oldest first. */
  writesOf(key: ObjectKey, fromMs: number, toMs: number, limit: number): (StoredWrite & { seq: number })[] {
    const id = this.database.knownIdOf(key);
    if (id === undefined) return [];
    const rows = this.database
      .statement(`SELECT ${WRITE_COLUMNS} FROM writes WHERE object_id = ? AND ts_ms > ? AND ts_ms <= ? ORDER BY ts_ms, id LIMIT ?`)
      .all(id, fromMs, toMs, limit) as Record<string, string | number | null>[];
    return rows.map(storedWrite);
  }

  /** The projection just before `fromMs` (the state band's starting value). */
  projectionBefore(key: ObjectKey, fromMs: number): Record<string, string> | undefined {
    const id = this.database.knownIdOf(key);
    const text = id === undefined ? undefined : this.projectionTextBefore(id, fromMs);
    return text === undefined ? undefined : (JSON.parse(text) as Record<string, string>);
  }

  private projectionTextBefore(id: number, fromMs: number): string | undefined {
    const hit = (this.database
      .statement("SELECT projection FROM writes WHERE object_id = ? AND ts_ms <= ? ORDER BY ts_ms DESC, id DESC LIMIT 1")
      .get(id, fromMs) ?? this.database.statement("SELECT projection FROM first_seen WHERE object_id = ? AND ts_ms <= ?").get(id, fromMs)) as
      { projection: string } | undefined;
    return hit?.projection;
  }

  /** Every write in (from, to] counted into `columns` columns by SQLite: memory follows the columns and the lanes, not the writes. */
  timeline(key: ObjectKey, fromMs: number, toMs: number, columns: number): ObjectTimeline {
    const range = { startMs: fromMs, endMs: toMs };
    const id = this.database.knownIdOf(key);
    if (id === undefined) return buildTimeline({ counts: [], lanes: [], changes: [] }, range, columns);
    const inRange = "object_id = @id AND ts_ms > @fromMs AND ts_ms <= @toMs";
    // columnOf (objects/timeline.ts) in SQL: the same double arithmetic in the same order, truncated (as floor is, above zero).
    const column = "MIN(@columns - 1, CAST(((ts_ms - @fromMs) * @columns) / (@toMs - @fromMs) AS INTEGER))";
    const args = { id, fromMs, toMs, columns };
    const counts = this.database
      .statement(`SELECT ${column} AS i, class AS cls, COUNT(*) AS n FROM writes WHERE ${inRange} GROUP BY i, cls`)
      .all(args) as ColumnCount[];
    const top = this.database
      .statement(`SELECT path, COUNT(*) AS changes FROM field_changes WHERE ${inRange} GROUP BY path ORDER BY changes DESC, path LIMIT ${TIMELINE_LANES}`)
      .all(args) as { path: string; changes: number }[];
    const byLane = new Map<string, [number, number][]>(top.map((t) => [t.path, []]));
    const paths = top.map((_, i) => `@p${i}`).join(", ");
    if (top.length > 0)
      for (const t of this.database
        .statement(`SELECT path, ${column} AS i, COUNT(*) AS n FROM field_changes WHERE ${inRange} AND path IN (${paths}) GROUP BY path, i ORDER BY path, i`)
        .all({ ...args, ...Object.fromEntries(top.map((t, i) => [`p${i}`, t.path])) }) as { path: string; i: number; n: number }[])
        byLane.get(t.path)?.push([t.i, t.n]);
    const lanes = top.map(({ path, changes }) => ({ path, changes, ticks: byLane.get(path) ?? [] }));
    // The writes whose projection differs from the one before them. Only a write that changed routing, created or
    // deleted (or that no body shows) can: an unrouted or no-op write left the projection as it was, so it is skipped.
    const changes = this.database
      .statement(
        `SELECT tsMs, projection FROM (SELECT ts_ms AS tsMs, projection, LAG(projection) OVER (ORDER BY ts_ms, id) AS before FROM writes
         WHERE ${inRange} AND ${MOVES}) WHERE before IS NOT projection`,
      )
      .iterate(args) as IterableIterator<ProjectionChange>;
    const initial = this.projectionTextBefore(id, fromMs);
    return buildTimeline({ counts, lanes, changes: firstDiffering(changes, initial), initial }, range, columns);
  }

  /**
   * Many objects' lanes on one time axis: for each, its routed projection's segments (at most one change per
   * column, as on its own timeline) and its routed writes (transitions) per column. One read of the writes that can
   * move a projection (moves.ts), from their index alone, for all of them; then each one's projection before the range.
   */
  lanes(keys: ObjectKey[], fromMs: number, toMs: number, columns: number): { segments: TimelineSegment[]; transitions: [number, number][] }[] {
    const range = { startMs: fromMs, endMs: toMs };
    const ids = keys.map((key) => this.database.knownIdOf(key));
    const known = ids.filter((id): id is number => id !== undefined);
    const changes = new Map<number, ProjectionChange[]>();
    const transitions = new Map<number, [number, number][]>();
    if (known.length > 0) {
      const marks = known.map(() => "?").join(",");
      const rows = this.database.db
        .prepare(
          `SELECT object_id AS id, ts_ms AS tsMs, class AS cls, projection FROM writes
           WHERE object_id IN (${marks}) AND ts_ms > ? AND ts_ms <= ? AND ${MOVES} ORDER BY object_id, ts_ms, id`,
        )
        .iterate(...known, fromMs, toMs) as IterableIterator<ProjectionChange & { id: number; cls: WriteClass }>;
      // A change is a write whose projection differs from the one before it in the range (the first always is, until
      // firstDiffering compares it with the projection the range began with); a transition, a routed write.
      let before: { id: number; projection: string } | undefined;
      for (const r of rows) {
        if (before?.id !== r.id || before.projection !== r.projection)
          (changes.get(r.id) ?? changes.set(r.id, []).get(r.id)!).push({ tsMs: r.tsMs, projection: r.projection });
        before = r;
        if (r.cls !== "routed") continue;
        const ticks = transitions.get(r.id) ?? transitions.set(r.id, []).get(r.id)!;
        const column = columnOf(r.tsMs, range, columns);
        if (ticks.at(-1)?.[0] === column) ticks.at(-1)![1]++;
        else ticks.push([column, 1]);
      }
    }
    return ids.map((id) => {
      if (id === undefined) return { segments: buildTimeline({ counts: [], lanes: [], changes: [] }, range, columns).segments, transitions: [] };
      const initial = this.projectionTextBefore(id, fromMs);
      const timeline = buildTimeline({ counts: [], lanes: [], changes: firstDiffering(changes.get(id) ?? [], initial), initial }, range, columns);
      return { segments: timeline.segments, transitions: transitions.get(id) ?? [] };
    });
  }

  /** The picked write in (from, to], or undefined when the object has none there (or not that one). */
  pick(key: ObjectKey, fromMs: number, toMs: number, pick: WritePick): PickedWriteAnswer | undefined {
    const id = this.database.knownIdOf(key);
    if (id === undefined) return undefined;
    const one = (where: string, order: string, ...args: number[]) =>
      this.database
        .statement(`SELECT ${WRITE_COLUMNS} FROM writes WHERE object_id = ? AND ts_ms > ? AND ts_ms <= ? AND ${where} ORDER BY ${order} LIMIT 1`)
        .get(id, fromMs, toMs, ...args) as Record<string, string | number | null> | undefined;
    const FORWARD = "ts_ms, id";
    const BACKWARD = "ts_ms DESC, id DESC";
    let row: Record<string, string | number | null> | undefined;
    if ("seq" in pick) row = one("id = ?", FORWARD, pick.seq);
    else {
      const after = one("ts_ms >= ?", FORWARD, pick.nearMs);
      const before = one("ts_ms < ?", BACKWARD, pick.nearMs);
      row = before && (!after || pick.nearMs - (before.ts_ms as number) < (after.ts_ms as number) - pick.nearMs) ? before : after;
    }
    if (!row) return undefined;
    const tsMs = row.ts_ms as number;
    const seq = row.id as number;
    const earlier = "(ts_ms < ? OR (ts_ms = ? AND id < ?))";
    const later = "(ts_ms > ? OR (ts_ms = ? AND id > ?))";
    const count = (where: string, ...args: number[]) =>
      (
        this.database
          .statement(`SELECT COUNT(*) AS n FROM writes WHERE object_id = ? AND ts_ms > ? AND ts_ms <= ? AND ${where}`)
          .get(id, fromMs, toMs, ...args) as {
          n: number;
        }
      ).n;
    const { cls, ...rest } = storedWrite(row);
    const audited = row.request_key
      ? (this.database.statement("SELECT noop, evidence FROM audit_requests WHERE request_key = ?").get(row.request_key) as
          { noop: number | null; evidence: NoopEvidence | null } | undefined)
      : undefined;
    return {
      write: { ...rest, class: cls },
      ...(audited ? { audited: { noop: audited.noop === null ? null : audited.noop === 1, evidence: audited.evidence } } : {}),
      index: count(earlier, tsMs, tsMs, seq) + 1,
      total: count("1"),
      previousSeq: (one(earlier, BACKWARD, tsMs, tsMs, seq)?.id as number | undefined) ?? null,
      nextSeq: (one(later, FORWARD, tsMs, tsMs, seq)?.id as number | undefined) ?? null,
    };
  }
}
