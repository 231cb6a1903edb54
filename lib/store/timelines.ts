/**
 * One object's writes as its timeline page reads them: all of a range counted per pixel column (no
 * write returned whole), one write in full when it is picked (by seq, or the nearest to a time) with
 * its place among the range's writes, and the projection the range began with.
 */
import type { FieldChange } from "../churn/diff";
import type { WriteClass } from "../churn/write-class";
import {
  buildTimeline,
  columnOf,
  TIMELINE_LANES,
  type ColumnCount,
  type ObjectTimeline,
  type ProjectionChange,
  type TimelineSegment,
  type TraitTick,
} from "../objects/timeline";
import type { NoopEvidence } from "../churn/preconditions";
import { traitsOf } from "../churn/conditions";
import type { ObjectKey, PickedWriteAnswer, PickOnly, StoredWrite } from "../wire/objects";
import type { StoreDatabase } from "./database";
import { MOVES } from "./moves";
import { MARKED } from "./traits";

/** A write by its number (with `step`, the one that many places from it), or the nearest to a time. */
export type WritePick = { seq: number; step?: number; only?: PickOnly } | { nearMs: number; only?: PickOnly };

const ONLY: Record<PickOnly, string> = { routed: "class = 'routed'", marked: MARKED };

const WRITE_COLUMNS =
  "id, ts_ms, rv, class, writer, source, heartbeat, changes, projection, verb, subresource, user_agent, code, latency_ms, request_key, traits";

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
    ...(r.traits ? { traits: traitsOf(r.traits as string) } : {}),
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
  async writesOf(key: ObjectKey, fromMs: number, toMs: number, limit: number): Promise<(StoredWrite & { seq: number })[]> {
    const id = await this.database.knownIdOf(key);
    if (id === undefined) return [];
    const rows = await this.sql().all<Record<string, string | number | null>>(
      `SELECT ${WRITE_COLUMNS} FROM writes WHERE object_id = ? AND ts_ms > ? AND ts_ms <= ? ORDER BY ts_ms, id LIMIT ?`,
      [id, fromMs, toMs, limit],
    );
    return rows.map(storedWrite);
  }

  /** The projection just before `fromMs` (the state band's starting value). */
  async projectionBefore(key: ObjectKey, fromMs: number): Promise<Record<string, string> | undefined> {
    const id = await this.database.knownIdOf(key);
    const text = id === undefined ? undefined : await this.projectionTextBefore(id, fromMs);
    return text === undefined ? undefined : (JSON.parse(text) as Record<string, string>);
  }

  private sql() {
    return this.database.sql();
  }

  private async projectionTextBefore(id: number, fromMs: number): Promise<string | undefined> {
    const sql = this.sql();
    const hit =
      (await sql.get<{ projection: string }>("SELECT projection FROM writes WHERE object_id = ? AND ts_ms <= ? ORDER BY ts_ms DESC, id DESC LIMIT 1", [
        id,
        fromMs,
      ])) ?? (await sql.get<{ projection: string }>("SELECT projection FROM first_seen WHERE object_id = ? AND ts_ms <= ?", [id, fromMs]));
    return hit?.projection;
  }

  /** Every write in (from, to] counted into `columns` columns by the database: memory follows the columns and the lanes, not the writes. */
  async timeline(key: ObjectKey, fromMs: number, toMs: number, columns: number): Promise<ObjectTimeline> {
    const range = { startMs: fromMs, endMs: toMs };
    const id = await this.database.knownIdOf(key);
    if (id === undefined) return buildTimeline({ counts: [], lanes: [], changes: [] }, range, columns);
    const sql = this.sql();
    const inRange = "object_id = ? AND ts_ms > ? AND ts_ms <= ?";
    const inRangeArgs = [id, fromMs, toMs];
    // columnOf (objects/timeline.ts) in SQL: the same arithmetic in the same order, truncated (as floor is, above zero).
    // The bounds are numbers the caller checked, written into the SQL so that every engine reads them as integers.
    const [from, to, cols] = [fromMs, toMs, columns].map((n) => String(Math.trunc(n)));
    const column = this.database.engine.least(`${cols} - 1`, `CAST(((ts_ms - ${from}) * ${cols}) / (${to} - ${from}) AS INTEGER)`);
    const counts = await sql.all<ColumnCount>(`SELECT ${column} AS i, class AS cls, COUNT(*) AS n FROM writes WHERE ${inRange} GROUP BY i, cls`, inRangeArgs);
    const top = await sql.all<{ path: string; changes: number }>(
      `SELECT path, COUNT(*) AS changes FROM field_changes WHERE ${inRange} GROUP BY path ORDER BY changes DESC, path LIMIT ${TIMELINE_LANES}`,
      inRangeArgs,
    );
    const byLane = new Map<string, [number, number][]>(top.map((t) => [t.path, []]));
    if (top.length > 0)
      for (const t of await sql.all<{ path: string; i: number; n: number }>(
        `SELECT path, ${column} AS i, COUNT(*) AS n FROM field_changes WHERE ${inRange} AND path IN (${top.map(() => "?").join(", ")}) GROUP BY path, i ORDER BY path, i`,
        [...inRangeArgs, ...top.map((t) => t.path)],
      ))
        byLane.get(t.path)?.push([t.i, t.n]);
    const lanes = top.map(({ path, changes }) => ({ path, changes, ticks: byLane.get(path) ?? [] }));
    // The writes whose projection differs from the one before them. Only a write that changed routing, created or
    // deleted (or that no body shows) can: an unrouted or no-op write left the projection as it was, so it is skipped.
    const changes = await sql.all<ProjectionChange>(
      `SELECT "tsMs", projection FROM (SELECT ts_ms AS "tsMs", projection, LAG(projection) OVER (ORDER BY ts_ms, id) AS before FROM writes
         WHERE ${inRange} AND ${MOVES}) AS moved WHERE before IS DISTINCT FROM projection`,
      inRangeArgs,
    );
    const initial = await this.projectionTextBefore(id, fromMs);
    // Echoes and condition clock faults per column, marked on the timeline (an object's few, by its own index).
    const traits = await sql.all<TraitTick>(
      `SELECT ${column} AS i, traits, COUNT(*) AS n FROM writes WHERE ${inRange} AND traits IS NOT NULL GROUP BY i, traits`,
      inRangeArgs,
    );
    return buildTimeline({ counts, lanes, changes: firstDiffering(changes, initial), initial, traits }, range, columns);
  }

  /**
   * Many objects' lanes on one time axis: for each, its routed projection's segments (at most one change per
   * column, as on its own timeline) and its routed writes (transitions) per column. One read of the writes that can
   * move a projection (moves.ts), from their index alone, for all of them; then each one's projection before the range.
   */
  async lanes(keys: ObjectKey[], fromMs: number, toMs: number, columns: number): Promise<{ segments: TimelineSegment[]; transitions: [number, number][] }[]> {
    const range = { startMs: fromMs, endMs: toMs };
    const ids: (number | undefined)[] = [];
    for (const key of keys) ids.push(await this.database.knownIdOf(key));
    const known = ids.filter((id): id is number => id !== undefined);
    const changes = new Map<number, ProjectionChange[]>();
    const transitions = new Map<number, [number, number][]>();
    if (known.length > 0) {
      const marks = known.map(() => "?").join(",");
      const rows = await this.sql().all<ProjectionChange & { id: number; cls: WriteClass }>(
        `SELECT object_id AS id, ts_ms AS "tsMs", class AS cls, projection FROM writes
           WHERE object_id IN (${marks}) AND ts_ms > ? AND ts_ms <= ? AND ${MOVES} ORDER BY object_id, ts_ms, id`,
        [...known, fromMs, toMs],
      );
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
    const out: { segments: TimelineSegment[]; transitions: [number, number][] }[] = [];
    for (const id of ids) {
      if (id === undefined) {
        out.push({ segments: buildTimeline({ counts: [], lanes: [], changes: [] }, range, columns).segments, transitions: [] });
        continue;
      }
      const initial = await this.projectionTextBefore(id, fromMs);
      const timeline = buildTimeline({ counts: [], lanes: [], changes: firstDiffering(changes.get(id) ?? [], initial), initial }, range, columns);
      out.push({ segments: timeline.segments, transitions: transitions.get(id) ?? [] });
    }
    return out;
  }

  /** The picked write in (from, to], or undefined when the object has none there (or not that one). */
  async pick(key: ObjectKey, fromMs: number, toMs: number, pick: WritePick): Promise<PickedWriteAnswer | undefined> {
    const id = await this.database.knownIdOf(key);
    if (id === undefined) return undefined;
    const sql = this.sql();
    /** The first write in `order` that `where` keeps, or with `skip`, the one that many after it. */
    const nth = (skip: number, where: string, order: string, ...args: number[]) =>
      sql.get<Record<string, string | number | null>>(
        `SELECT ${WRITE_COLUMNS} FROM writes WHERE object_id = ? AND ts_ms > ? AND ts_ms <= ? AND ${where} ORDER BY ${order} LIMIT 1 OFFSET ${Math.trunc(skip)}`,
        [id, fromMs, toMs, ...args],
      );
    const one = (where: string, order: string, ...args: number[]) => nth(0, where, order, ...args);
    const FORWARD = "ts_ms, id";
    const BACKWARD = "ts_ms DESC, id DESC";
    let row: Record<string, string | number | null> | undefined;
    const only = pick.only ? ` AND ${ONLY[pick.only]}` : "";
    if ("seq" in pick) {
      row = await one("id = ?", FORWARD, pick.seq);
      if (row && pick.step) {
        // `step` places on (back), counting only what `only` keeps; past the range's last (first) such write, that one.
        const [from, to] = [row.ts_ms as number, row.id as number];
        const beyond = pick.step > 0 ? `(ts_ms > ? OR (ts_ms = ? AND id > ?))${only}` : `(ts_ms < ? OR (ts_ms = ? AND id < ?))${only}`;
        const [toward, back] = pick.step > 0 ? [FORWARD, BACKWARD] : [BACKWARD, FORWARD];
        row = (await nth(Math.abs(pick.step) - 1, beyond, toward, from, from, to)) ?? (await one(beyond, back, from, from, to)) ?? row;
      }
    } else {
      const after = await one(`ts_ms >= ?${only}`, FORWARD, pick.nearMs);
      const before = await one(`ts_ms < ?${only}`, BACKWARD, pick.nearMs);
      row = before && (!after || pick.nearMs - (before.ts_ms as number) < (after.ts_ms as number) - pick.nearMs) ? before : after;
    }
    if (!row) return undefined;
    const tsMs = row.ts_ms as number;
    const seq = row.id as number;
    const earlier = "(ts_ms < ? OR (ts_ms = ? AND id < ?))";
    const later = "(ts_ms > ? OR (ts_ms = ? AND id > ?))";
    const count = async (where: string, ...args: number[]) =>
      (await sql.get<{ n: number }>(`SELECT COUNT(*) AS n FROM writes WHERE object_id = ? AND ts_ms > ? AND ts_ms <= ? AND ${where}`, [
        id,
        fromMs,
        toMs,
        ...args,
      ]))!.n;
    const { cls, ...rest } = storedWrite(row);
    const audited = row.request_key
      ? await sql.get<{ noop: number | null; evidence: NoopEvidence | null }>("SELECT noop, evidence FROM audit_requests WHERE request_key = ?", [
          row.request_key,
        ])
      : undefined;
    return {
      write: { ...rest, class: cls },
      ...(audited ? { audited: { noop: audited.noop === null ? null : audited.noop === 1, evidence: audited.evidence } } : {}),
      index: (await count(earlier, tsMs, tsMs, seq)) + 1,
      total: await count("TRUE"),
      previousSeq: ((await one(earlier, BACKWARD, tsMs, tsMs, seq))?.id as number | undefined) ?? null,
      nextSeq: ((await one(later, FORWARD, tsMs, tsMs, seq))?.id as number | undefined) ?? null,
    };
  }
}
