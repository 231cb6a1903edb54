/**
 * Per-object counts per UTC day (writes by class, changed paths, writers) and per hour (writes, for
 * sparklines), so the Objects ranking over weeks reads a row per object and day instead of every
 * write. Days that are over are rolled up in the background (`rollPending`), an hour at a time (a
 * whole day takes seconds on a large store); until a day is complete a ranking reads it from the
 * writes. A write stored into a day (partly) rolled up, such as from an audit log ingested late,
 * drops that day's rollup. Ranges are (from, to],
 * as everywhere in the store, and so are days: day k holds (k·24 h, (k+1)·24 h].
 */
import type Database from "better-sqlite3";

export const DAY_MS = 86_400_000;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS rank_days (
  day INTEGER NOT NULL, object_id INTEGER NOT NULL, writes INTEGER NOT NULL,
  c_create INTEGER NOT NULL, c_delete INTEGER NOT NULL, c_routed INTEGER NOT NULL, c_unrouted INTEGER NOT NULL,
  c_noop INTEGER NOT NULL, c_unknown INTEGER NOT NULL, c_heartbeat INTEGER NOT NULL,
  PRIMARY KEY (day, object_id)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rank_days_done (day INTEGER PRIMARY KEY);
-- A day being rolled up an hour at a time: how many of its hours are in.
CREATE TABLE IF NOT EXISTS rank_days_progress (day INTEGER PRIMARY KEY, hours INTEGER NOT NULL);
-- The page's details for whole days: changed paths and writers per object and day, writes per object and hour.
CREATE TABLE IF NOT EXISTS rank_days_fields (object_id INTEGER NOT NULL, day INTEGER NOT NULL, path TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (object_id, day, path)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rank_days_writers (object_id INTEGER NOT NULL, day INTEGER NOT NULL, writer TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (object_id, day, writer)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rank_hours (object_id INTEGER NOT NULL, hour INTEGER NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (object_id, hour)) WITHOUT ROWID;
`;

export const HOUR_MS = 3_600_000;
const ROLLUP_FORMAT = "3";
const ROLLUP_TABLES = ["rank_days", "rank_days_done", "rank_days_progress", "rank_days_fields", "rank_days_writers"];

/** The per-object sums the ranking reads, over raw writes or over rolled-up days. */
export const CLASS_SUMS = `COUNT(*) AS writes,
  SUM(w.class = 'create') AS c_create, SUM(w.class = 'delete') AS c_delete, SUM(w.class = 'routed') AS c_routed,
  SUM(w.class = 'unrouted') AS c_unrouted, SUM(w.class = 'no-op') AS c_noop, SUM(w.class = 'unknown') AS c_unknown, SUM(w.heartbeat) AS c_heartbeat`;
export const COUNT_COLUMNS = ["writes", "c_create", "c_delete", "c_routed", "c_unrouted", "c_noop", "c_unknown", "c_heartbeat"] as const;

/** Day k holds (k·DAY, (k+1)·DAY]. */
export const dayOf = (tsMs: number) => Math.ceil(tsMs / DAY_MS) - 1;

/** The whole days of (from, to] that are over by `nowMs`: [first, last], or null. */
export function wholeDays(fromMs: number, toMs: number, nowMs: number): [number, number] | null {
  const first = Math.ceil(fromMs / DAY_MS); // the first day starting at or after `from`
  const last = Math.min(Math.floor(toMs / DAY_MS), Math.floor(nowMs / DAY_MS)) - 1;
  return last < first ? null : [first, last];
}

/** A range read as runs of rolled-up days and the rest (partial days at the edges, days not rolled up yet) from the writes. */
export interface RangePlan {
  rolled: [number, number][];
  raw: [number, number][];
}

export class DayRollups {
  private readonly isStarted: Database.Statement;
  private readonly undoDay: Database.Statement[];
  private readonly undoHours: Database.Statement;

  constructor(private readonly db: Database.Database) {
    db.exec(SCHEMA);
    // Rollups made by another version of this code are dropped, and rebuilt from the writes when needed.
    const format = db.prepare("SELECT value FROM meta WHERE key = 'rollup-format'").get() as { value: string } | undefined;
    if (format?.value !== ROLLUP_FORMAT) {
      for (const table of [...ROLLUP_TABLES, "rank_hours"]) db.exec(`DELETE FROM ${table}`);
      db.prepare("INSERT INTO meta (key, value) VALUES ('rollup-format', ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(ROLLUP_FORMAT);
    }
    this.isStarted = db.prepare("SELECT 1 FROM rank_days_done WHERE day = ? UNION ALL SELECT 1 FROM rank_days_progress WHERE day = ?");
    this.undoDay = ROLLUP_TABLES.map((table) => db.prepare(`DELETE FROM ${table} WHERE day = ?`));
    this.undoHours = db.prepare("DELETE FROM rank_hours WHERE hour >= ? AND hour < ?");
  }

  /** Days known not rolled up in the current transaction (no other writer can roll one up meanwhile). */
  private readonly notRolled = new Set<number>();

  /** A transaction starts or ends, or days are rolled up: what was known may be stale. */
  forget(): void {
    this.notRolled.clear();
  }

  /** Called for each write stored: one into a day that is over may land in a day (partly) rolled up, which is then dropped. */
  written(tsMs: number, nowMs = Date.now()): void {
    const day = dayOf(tsMs);
    if ((day + 1) * DAY_MS > nowMs) return; // today or later: never rolled up
    if (this.notRolled.has(day)) return;
    if (this.isStarted.get(day, day) !== undefined) {
      for (const statement of this.undoDay) statement.run(day);
      this.undoHours.run(day * 24, (day + 1) * 24);
    }
    if (this.db.inTransaction) this.notRolled.add(day);
  }

  private doneIn(first: number, last: number): Set<number> {
    return new Set((this.db.prepare("SELECT day FROM rank_days_done WHERE day BETWEEN ? AND ?").all(first, last) as { day: number }[]).map((r) => r.day));
  }

  /**
   * How to read (from, to]: the rolled-up whole days as runs, everything else from the writes. A
   * request never rolls up days itself (a day takes seconds on a large store); `rollPending` does.
   */
  plan(fromMs: number, toMs: number, nowMs = Date.now()): RangePlan {
    const days = wholeDays(fromMs, toMs, nowMs);
    if (!days) return { rolled: [], raw: [[fromMs, toMs]] };
    const done = this.doneIn(...days);
    const rolled: [number, number][] = [];
    const raw: [number, number][] = [];
    const add = (list: [number, number][], from: number, to: number) => {
      const last = list.at(-1);
      if (last && last[1] === from - (list === rolled ? 1 : 0)) last[1] = to;
      else list.push([from, to]);
    };
    if (fromMs < days[0] * DAY_MS) add(raw, fromMs, days[0] * DAY_MS);
    for (let day = days[0]; day <= days[1]; day++) {
      if (done.has(day)) add(rolled, day, day);
      else add(raw, day * DAY_MS, (day + 1) * DAY_MS);
    }
    if ((days[1] + 1) * DAY_MS < toMs) add(raw, (days[1] + 1) * DAY_MS, toMs);
    return { rolled, raw };
  }

  /**
   * Rolls up to `maxHours` hours of the days in [first, last] that are not rolled up yet, the latest
   * day first, an hour per transaction (about a twenty-fourth of a day's cost, so the caller's thread
   * is never held for long). A day counts once all 24 hours are in. Returns the hours rolled.
   */
  roll(first: number, last: number, maxHours = Infinity): number {
    const done = this.doneIn(first, last);
    const progress = new Map((this.db.prepare("SELECT day, hours FROM rank_days_progress WHERE day BETWEEN ? AND ?").all(first, last) as { day: number; hours: number }[]).map((r) => [r.day, r.hours]));
    const add = (column: string) => `${column} = ${column} + excluded.${column}`;
    const sums = this.db.prepare(
      `INSERT INTO rank_days (day, object_id, ${COUNT_COLUMNS.join(", ")})
       SELECT ?, w.object_id, ${CLASS_SUMS} FROM writes w INDEXED BY writes_ts WHERE w.ts_ms > ? AND w.ts_ms <= ? GROUP BY w.object_id
       ON CONFLICT (day, object_id) DO UPDATE SET ${COUNT_COLUMNS.map(add).join(", ")}`,
    );
    const details = [
      `INSERT INTO rank_days_fields (object_id, day, path, n) SELECT object_id, ?, path, COUNT(*) FROM field_changes INDEXED BY field_changes_ts WHERE ts_ms > ? AND ts_ms <= ? GROUP BY object_id, path ON CONFLICT DO UPDATE SET ${add("n")}`,
      `INSERT INTO rank_days_writers (object_id, day, writer, n) SELECT object_id, ?, writer, COUNT(*) FROM writes INDEXED BY writes_ts WHERE ts_ms > ? AND ts_ms <= ? GROUP BY object_id, writer ON CONFLICT DO UPDATE SET ${add("n")}`,
    ].map((sql) => this.db.prepare(sql));
    // Hour h holds (h·1 h, (h+1)·1 h], like days. An hour is a sliver of the table: read it by time (the
    // planner would rather scan the covering per-object index, all of it).
    const hours = this.db.prepare(`INSERT INTO rank_hours (object_id, hour, n) SELECT object_id, ?, COUNT(*) FROM writes INDEXED BY writes_ts WHERE ts_ms > ? AND ts_ms <= ? GROUP BY object_id`);
    const step = this.db.prepare("INSERT INTO rank_days_progress (day, hours) VALUES (?, ?) ON CONFLICT (day) DO UPDATE SET hours = excluded.hours");
    const finish = [this.db.prepare("DELETE FROM rank_days_progress WHERE day = ?"), this.db.prepare("INSERT INTO rank_days_done (day) VALUES (?)")];
    let rolled = 0;
    this.forget();
    for (let day = last; day >= first && rolled < maxHours; day--) {
      if (done.has(day)) continue;
      for (let hour = progress.get(day) ?? 0; hour < 24 && rolled < maxHours; hour++, rolled++) {
        const fromMs = day * DAY_MS + hour * HOUR_MS;
        this.db.transaction(() => {
          sums.run(day, fromMs, fromMs + HOUR_MS);
          for (const statement of details) statement.run(day, fromMs, fromMs + HOUR_MS);
          hours.run(day * 24 + hour, fromMs, fromMs + HOUR_MS);
          if (hour < 23) step.run(day, hour + 1);
          else for (const statement of finish) statement.run(day);
        })();
      }
    }
    return rolled;
  }

  /** Rolls up to `maxHours` hours of the days that are over and have writes, the latest first; returns how many it rolled. */
  rollPending(nowMs = Date.now(), maxHours = Infinity): number {
    const bounds = this.db.prepare("SELECT MIN(ts_ms) AS first, MAX(ts_ms) AS last FROM writes").get() as { first: number | null; last: number | null };
    if (bounds.first === null || bounds.last === null) return 0;
    const last = Math.min(dayOf(bounds.last), Math.floor(nowMs / DAY_MS) - 1);
    return last >= dayOf(bounds.first) ? this.roll(dayOf(bounds.first), last, maxHours) : 0;
  }

  /** Drops the rollups of days that retention emptied or cut into. */
  pruned(beforeMs: number): void {
    const day = dayOf(beforeMs);
    for (const table of ROLLUP_TABLES) this.db.prepare(`DELETE FROM ${table} WHERE day <= ?`).run(day);
    this.db.prepare("DELETE FROM rank_hours WHERE hour < (? + 1) * 24").run(day);
  }
}
