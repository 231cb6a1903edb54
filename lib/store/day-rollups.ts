/**
 * Per-object write counts per UTC day, so the Objects ranking over weeks reads one row per object
 * and day instead of every write. A day is rolled up once it is over (on first use, or ahead of time
 * by `rollPending`); a write recorded into a rolled-up day (an audit log ingested late) drops that
 * day's rollup, which is rebuilt from the writes when next needed. Ranges are (from, to], as
 * everywhere in the store, and so are days: day k holds (k·24 h, (k+1)·24 h].
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
`;

/** The per-object sums the ranking reads, over raw writes or over rolled-up days. */
export const CLASS_SUMS = `COUNT(*) AS writes,
  SUM(w.class = 'create') AS c_create, SUM(w.class = 'delete') AS c_delete, SUM(w.class = 'routed') AS c_routed,
  SUM(w.class = 'unrouted') AS c_unrouted, SUM(w.class = 'no-op') AS c_noop, SUM(w.class = 'unknown') AS c_unknown, SUM(w.heartbeat) AS c_heartbeat`;
export const COUNT_COLUMNS = ["writes", "c_create", "c_delete", "c_routed", "c_unrouted", "c_noop", "c_unknown", "c_heartbeat"] as const;

/** Day k holds (k·DAY, (k+1)·DAY]. */
export const dayOf = (tsMs: number) => Math.ceil(tsMs / DAY_MS) - 1;

/** How a range splits: whole days read from rollups, the partial days at its edges from the writes. */
export function splitRange(fromMs: number, toMs: number, nowMs: number): { days: [number, number] | null; raw: [number, number][] } {
  const firstDay = Math.ceil(fromMs / DAY_MS); // the first day starting at or after `from`
  // The last whole day inside the range, and over by now (a day still being written is read raw).
  const lastDay = Math.min(Math.floor(toMs / DAY_MS), Math.floor(nowMs / DAY_MS)) - 1;
  if (lastDay < firstDay) return { days: null, raw: [[fromMs, toMs]] };
  const raw: [number, number][] = [];
  if (fromMs < firstDay * DAY_MS) raw.push([fromMs, firstDay * DAY_MS]);
  if ((lastDay + 1) * DAY_MS < toMs) raw.push([(lastDay + 1) * DAY_MS, toMs]);
  return { days: [firstDay, lastDay], raw };
}

export class DayRollups {
  private readonly isDone: Database.Statement;
  private readonly undo: Database.Statement[];

  constructor(private readonly db: Database.Database) {
    db.exec(SCHEMA);
    this.isDone = db.prepare("SELECT 1 FROM rank_days_done WHERE day = ?");
    this.undo = [db.prepare("DELETE FROM rank_days WHERE day = ?"), db.prepare("DELETE FROM rank_days_done WHERE day = ?")];
  }

  /** Called for each write stored: one into a day that is over may land in a rolled-up day, which is then dropped. */
  written(tsMs: number, nowMs = Date.now()): void {
    const day = dayOf(tsMs);
    if ((day + 1) * DAY_MS > nowMs) return; // today or later: never rolled up
    if (this.isDone.get(day) === undefined) return;
    for (const statement of this.undo) statement.run(day);
  }

  /** Rolls up the days in [first, last] not rolled up yet, each in one pass over its writes. */
  ensure(first: number, last: number): void {
    const done = new Set((this.db.prepare("SELECT day FROM rank_days_done WHERE day BETWEEN ? AND ?").all(first, last) as { day: number }[]).map((r) => r.day));
    const roll = this.db.prepare(
      `INSERT INTO rank_days (day, object_id, ${COUNT_COLUMNS.join(", ")})
       SELECT ?, w.object_id, ${CLASS_SUMS} FROM writes w WHERE w.ts_ms > ? AND w.ts_ms <= ? GROUP BY w.object_id`,
    );
    const mark = this.db.prepare("INSERT INTO rank_days_done (day) VALUES (?)");
    for (let day = first; day <= last; day++) {
      if (done.has(day)) continue;
      this.db.transaction(() => {
        roll.run(day, day * DAY_MS, (day + 1) * DAY_MS);
        mark.run(day);
      })();
    }
  }

  /** Rolls up every day that is over and has writes (the recorder does this hourly, so a first query does not). */
  rollPending(nowMs = Date.now()): void {
    const bounds = this.db.prepare("SELECT MIN(ts_ms) AS first, MAX(ts_ms) AS last FROM writes").get() as { first: number | null; last: number | null };
    if (bounds.first === null || bounds.last === null) return;
    const last = Math.min(dayOf(bounds.last), Math.floor(nowMs / DAY_MS) - 1);
    if (last >= dayOf(bounds.first)) this.ensure(dayOf(bounds.first), last);
  }

  /** Drops the rollups of days that retention emptied or cut into. */
  pruned(beforeMs: number): void {
    this.db.prepare("DELETE FROM rank_days WHERE day <= ?").run(dayOf(beforeMs));
    this.db.prepare("DELETE FROM rank_days_done WHERE day <= ?").run(dayOf(beforeMs));
  }
}
