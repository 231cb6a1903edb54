/**
 * Per-object counts per UTC hour and over aligned spans of hours and days (writes by class, rank-spans.ts), and per
 * day the page's details (changed paths, writers), so the Objects ranking over weeks reads a row per object and span
 * instead of every write, and a range that cuts days reads its edges by the span or hour. Quarter hours that are over
 * (today's too, a minute after they end) are rolled up in the background (`rollPending`), one per
 * transaction (a whole day takes seconds on a large store); an hour counts once its four quarters
 * are in, and a day once all its hours are and it is over. A write stored into a quarter hour already
 * rolled up, such as from an audit log ingested late, drops that day's rollup. Ranges are (from, to],
 * as everywhere in the store, and so are hours and days: day k holds (k·24 h, (k+1)·24 h].
 */
import { CLASS_SUMS, COUNT_COLUMNS, COUNTS } from "./counts";
import type { StoreDatabase } from "./database";
import type { SqlEngine } from "./engine/types";
import { TRAITED } from "./traits";
import { RankSpans, SPAN_TABLES, SPANS_SCHEMA, spanReads, type CountRead } from "./rank-spans";

export const DAY_MS = 86_400_000;
export const HOUR_MS = 3_600_000;
/** What one roll-up step reads: a quarter of an hour of writes (tens of milliseconds on 10 M stored writes here). */
const SLICE_MS = 900_000;
const SLICES_PER_HOUR = HOUR_MS / SLICE_MS;
const SLICES_PER_DAY = 24 * SLICES_PER_HOUR;
/**
 * How long after a quarter hour ends it may be rolled up. The recorder stamps a write with its arrival
 * time, so none lands in a quarter hour this old; an audit log can, and then drops the day's rollup.
 */
const SETTLE_MS = 60_000;
/** Quarter hour k of day d holds (d·DAY + k·15 min, d·DAY + (k+1)·15 min]. */
const sliceOf = (tsMs: number) => Math.ceil((tsMs - dayOf(tsMs) * DAY_MS) / SLICE_MS) - 1;

const SCHEMA = `
CREATE TABLE IF NOT EXISTS rank_days_done (day INTEGER PRIMARY KEY);
-- A day being rolled up a quarter of an hour at a time: how many of its quarters (from its first) are in.
CREATE TABLE IF NOT EXISTS rank_days_progress (day INTEGER PRIMARY KEY, slices INTEGER NOT NULL);
-- The page's details for whole days: changed paths and writers per object and day. Keyed by day first, so
-- each roll-up step adds to one day's rows, together on disk, rather than to rows all over the table
-- (rolling up took 2.3 times as long keyed by object); a page's objects are a seek per object and day.
CREATE TABLE IF NOT EXISTS rank_days_fields (day INTEGER NOT NULL, object_id INTEGER NOT NULL, path TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (day, object_id, path)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rank_days_writers (day INTEGER NOT NULL, object_id INTEGER NOT NULL, writer TEXT NOT NULL, n INTEGER NOT NULL, PRIMARY KEY (day, object_id, writer)) WITHOUT ROWID;
-- Echoes, no-ops and condition clocks per object, writer, class and traits (traits.ts), with the first such write as an example.
CREATE TABLE IF NOT EXISTS rank_days_traits (day INTEGER NOT NULL, object_id INTEGER NOT NULL, writer TEXT NOT NULL, class TEXT NOT NULL, traits TEXT NOT NULL, n INTEGER NOT NULL, example INTEGER NOT NULL, PRIMARY KEY (day, object_id, writer, class, traits)) WITHOUT ROWID;
-- Counts per object and hour: read by hour for a range's edges, by object for the page's sparklines (the
-- index leaves the counts out, so a step adding to an hour's counts does not move its index entries).
CREATE TABLE IF NOT EXISTS rank_hours (hour INTEGER NOT NULL, object_id INTEGER NOT NULL, ${COUNTS}, PRIMARY KEY (hour, object_id)) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS rank_hours_object ON rank_hours (object_id, hour);
${SPANS_SCHEMA(COUNTS)}`;

/**
 * The schema as the engine takes it. Where an index can carry columns, the per-object index of the hours carries their
 * writes, so a page's sparklines are read from it alone (each object's hours are otherwise a heap page each), once the
 * engine's analysis of a finished day has marked its pages all visible.
 */
const schemaFor = (engine: SqlEngine) =>
  engine.schema(SCHEMA).replace("rank_hours (object_id, hour);", `rank_hours (object_id, hour)${engine.including("writes")};`);

const ROLLUP_FORMAT = "11";
/** Taken by a roll-up step, and shared by every transaction that stores writes: replicas never roll a quarter hour while a write into it is uncommitted. */
const ROLL_LOCK = 7_420_135_201;
const DAY_TABLES = ["rank_spans", "rank_days_fields", "rank_days_writers", "rank_days_traits", "rank_hours"];
const ROLLUP_TABLES = ["rank_days_done", "rank_days_progress", "rank_days_fields", "rank_days_writers", "rank_days_traits"];

/** How many quarter hours of some days are rolled up (a day done: all of them), the days named by `daysIn` twice (`= ?` for one). */
const rolledDays = (daysIn: string) =>
  `SELECT day, ${SLICES_PER_DAY} AS slices FROM rank_days_done WHERE day ${daysIn} UNION ALL SELECT day, slices FROM rank_days_progress WHERE day ${daysIn}`;

/** Day k holds (k·DAY, (k+1)·DAY]. */
export const dayOf = (tsMs: number) => Math.ceil(tsMs / DAY_MS) - 1;

/**
 * How to read a range: whole days from the daily rollups, whole hours from the hourly ones, and
 * the rest (part hours at the edges, hours not rolled up yet) from the writes, as (from, to] ms. An
 * edge day that is rolled up and mostly inside the range is read as the day less its hours outside
 * (fewer rows than the hours inside); the part of a boundary hour inside is then added from the writes.
 */
export interface RangePlan {
  /** runs of days, added */
  rolled: [number, number][];
  /** runs of hours, added */
  hours: [number, number][];
  /** runs of hours outside the range in days of `rolled`, subtracted */
  minusHours: [number, number][];
  /** (from, to] ms ranges, added */
  raw: [number, number][];
  /** runs of the range's whole hours that are rolled up, by day or by hour (sparklines read these by the hour) */
  wholeHours: [number, number][];
  /** the counts of `rolled`, `hours` and `minusHours` as the fewest reads of rolled-up spans (rank-spans.ts) */
  counts: CountRead[];
}

/** Appends [from, to] to a list of runs, extending the last run when it ends where this one starts (`gap` apart). */
function addRun(list: [number, number][], from: number, to: number, gap: number): void {
  const last = list.at(-1);
  if (last && last[1] + gap === from) last[1] = to;
  else list.push([from, to]);
}

export class DayRollups {
  private readonly spans: RankSpans;

  private constructor(private readonly database: StoreDatabase) {
    this.spans = new RankSpans(database);
  }

  /** The roll-ups of a store, their tables made (and those of another version of this code dropped, to be rebuilt from the writes). */
  static async open(database: StoreDatabase): Promise<DayRollups> {
    await database.transaction(async () => {
      const sql = database.sql();
      await database.engine.lockUntilCommit(sql, ROLL_LOCK);
      if ((await database.getMeta("rollup-format")) !== ROLLUP_FORMAT) {
        for (const table of [...ROLLUP_TABLES, "rank_hours", ...SPAN_TABLES, "rank_days"]) await sql.exec(`DROP TABLE IF EXISTS ${table}`);
        await database.setMeta("rollup-format", ROLLUP_FORMAT);
      }
      await sql.exec(schemaFor(database.engine));
    });
    return new DayRollups(database);
  }

  private sql() {
    return this.database.sql();
  }

  private slicesIn(day: number): Promise<{ slices: number } | undefined> {
    return this.sql().get<{ slices: number }>(rolledDays("= ?"), [day, day]);
  }

  /**
   * On PostgreSQL, how far some days are rolled up, asked together with other questions in one statement (each `?` the
   * days as one array text); `learnRolled` takes its rows. A transaction that stores writes asks it first, for its days.
   */
  static readonly ROLLED_DAYS_SQL = rolledDays("= ANY(CAST(? AS bigint[]))");

  /** What `ROLLED_DAYS_SQL` answered of `days`, known to the current transaction from now on (a day it has no row of: none). */
  learnRolled(days: readonly number[], rows: readonly { day: number; slices: number }[]): void {
    const known = this.assertShared();
    if (!known) return;
    for (const day of days) known.rolledSlices.set(day, Math.max(0, ...rows.filter((row) => row.day === day).map((row) => row.slices)));
  }

  /** What the current transaction knows: whether it holds the roll-up lock shared, and the quarter hours rolled up of the days it saw. */
  private known() {
    return this.database.transactionValue(this, () => ({ locked: false, rolledSlices: new Map<number, number>() }));
  }

  /**
   * On PostgreSQL, a transaction that stores writes holds the roll-up lock shared, so no replica rolls up a quarter
   * hour while a write into it is uncommitted. It takes it first thing (before any partition is made), so that lock and
   * the tables' are always taken in the same order, and two transactions never wait for each other: `SHARING`, where
   * the transaction begins (WriteStore.batch), and then `shared` says it is held.
   */
  static readonly SHARING = `pg_advisory_xact_lock_shared(${ROLL_LOCK})`;

  shared(): void {
    const known = this.known();
    if (known) known.locked = true;
  }

  /**
   * Refuses to store a write in a transaction on PostgreSQL that did not begin with the lock (taken later, it could
   * deadlock); answers what the transaction knows.
   */
  assertShared(): ReturnType<DayRollups["known"]> {
    const known = this.known();
    if (known && !known.locked && this.database.engine.sharedByReplicas)
      throw new Error("a transaction storing writes on PostgreSQL must begin with the roll-ups' lock (WriteStore.batch)");
    return known;
  }

  /** Called for each write stored: one into a quarter hour already rolled up drops its day's rollups. */
  async written(tsMs: number): Promise<void> {
    const day = dayOf(tsMs);
    // Quarter hours rolled up of the days seen in the current transaction (no roll-up step can run meanwhile).
    const known = this.assertShared();
    let rolled = known?.rolledSlices.get(day);
    if (rolled === undefined) rolled = (await this.slicesIn(day))?.slices ?? 0;
    if (sliceOf(tsMs) < rolled) {
      for (const table of ROLLUP_TABLES) await this.sql().run(`DELETE FROM ${table} WHERE day = ?`, [day]);
      await this.sql().run("DELETE FROM rank_hours WHERE hour >= ? AND hour < ?", [day * 24, (day + 1) * 24]);
      await this.spans.drop(day * 24, day * 24 + 23);
      rolled = 0;
    }
    known?.rolledSlices.set(day, rolled);
  }

  private async doneIn(first: number, last: number): Promise<Set<number>> {
    return new Set((await this.sql().all<{ day: number }>("SELECT day FROM rank_days_done WHERE day BETWEEN ? AND ?", [first, last])).map((r) => r.day));
  }

  private async progressIn(first: number, last: number): Promise<Map<number, number>> {
    return new Map(
      (await this.sql().all<{ day: number; slices: number }>("SELECT day, slices FROM rank_days_progress WHERE day BETWEEN ? AND ?", [first, last])).map(
        (r) => [r.day, r.slices],
      ),
    );
  }

  /**
   * How to read (from, to]: rolled-up whole days and hours as runs, everything else from the writes.
   * A request never rolls anything up itself (a day takes seconds on a large store); `rollPending` does.
   */
  async plan(fromMs: number, toMs: number, nowMs = Date.now()): Promise<RangePlan> {
    const plan: RangePlan = { rolled: [], hours: [], minusHours: [], raw: [], wholeHours: [], counts: [] };
    const firstDay = dayOf(fromMs + 1);
    const lastDay = dayOf(toMs);
    const doneDays = await this.doneIn(firstDay, lastDay);
    const done = (day: number) => doneDays.has(day) && (day + 1) * DAY_MS <= nowMs;
    const progress = await this.progressIn(firstDay, lastDay);
    const hourRolled = (hour: number) => done(Math.floor(hour / 24)) || ((hour % 24) + 1) * SLICES_PER_HOUR <= (progress.get(Math.floor(hour / 24)) ?? 0);
    // (from, to]: by the hour where hours are rolled up, else from the writes.
    const byHour = (from: number, to: number) => {
      const first = Math.ceil(from / HOUR_MS);
      const last = Math.floor(to / HOUR_MS) - 1;
      if (last < first) return addRun(plan.raw, from, to, 0);
      if (from < first * HOUR_MS) addRun(plan.raw, from, first * HOUR_MS, 0);
      for (let hour = first; hour <= last; hour++) {
        if (hourRolled(hour)) {
          addRun(plan.hours, hour, hour, 1);
          addRun(plan.wholeHours, hour, hour, 1);
        } else addRun(plan.raw, hour * HOUR_MS, (hour + 1) * HOUR_MS, 0);
      }
      if ((last + 1) * HOUR_MS < to) addRun(plan.raw, (last + 1) * HOUR_MS, to, 0);
    };
    for (let day = firstDay; day <= lastDay; day++) {
      const from = Math.max(fromMs, day * DAY_MS);
      const to = Math.min(toMs, (day + 1) * DAY_MS);
      const first = Math.ceil(from / HOUR_MS); // the whole hours inside: [first, last]
      const last = Math.floor(to / HOUR_MS) - 1;
      if (!done(day) || last - first + 1 <= 12) {
        byHour(from, to);
        continue;
      }
      addRun(plan.rolled, day, day, 1);
      addRun(plan.wholeHours, first, last, 1);
      if (first > day * 24) addRun(plan.minusHours, day * 24, first - 1, 1);
      if (last < day * 24 + 23) addRun(plan.minusHours, last + 1, day * 24 + 23, 1);
      if (from < first * HOUR_MS) addRun(plan.raw, from, first * HOUR_MS, 0);
      if ((last + 1) * HOUR_MS < to) addRun(plan.raw, (last + 1) * HOUR_MS, to, 0);
    }
    const built = await this.spans.builtIn(firstDay * 24, lastDay * 24 + 23);
    plan.counts = [
      ...plan.rolled.flatMap(([first, last]) => spanReads(first * 24, last * 24 + 23, 1, built)),
      ...plan.hours.flatMap(([first, last]) => spanReads(first, last, 1, built)),
      ...plan.minusHours.flatMap(([first, last]) => spanReads(first, last, -1, built)),
    ];
    return plan;
  }

  /** The roll-up statements, made once. */
  private rollStatements?: ReturnType<DayRollups["rollSql"]>;

  private rollSql() {
    // The stored row named by its table: PostgreSQL finds a bare column ambiguous beside `excluded`.
    const add = (table: string) => (column: string) => `${column} = ${table}.${column} + excluded.${column}`;
    // A quarter hour is a sliver of the table: read it by time (SQLite's planner would rather scan the
    // covering per-object index, all of it).
    const byTime = (index: string) => this.database.engine.indexedBy(index);
    const sliceSums = `INSERT INTO rank_hours (hour, object_id, ${COUNT_COLUMNS.join(", ")}) SELECT CAST(? AS BIGINT), w.object_id, ${CLASS_SUMS} FROM writes w ${byTime("writes_ts")} WHERE w.ts_ms > ? AND w.ts_ms <= ? GROUP BY w.object_id
       ON CONFLICT (hour, object_id) DO UPDATE SET ${COUNT_COLUMNS.map(add("rank_hours")).join(", ")}`;
    const fields = `INSERT INTO rank_days_fields (day, object_id, path, n) SELECT CAST(? AS BIGINT), object_id, path, COUNT(*) FROM field_changes ${byTime("field_changes_ts")} WHERE ts_ms > ? AND ts_ms <= ? GROUP BY object_id, path ON CONFLICT (day, object_id, path) DO UPDATE SET ${add("rank_days_fields")("n")}`;
    const writers = `INSERT INTO rank_days_writers (day, object_id, writer, n) SELECT CAST(? AS BIGINT), object_id, writer, COUNT(*) FROM writes ${byTime("writes_ts")} WHERE ts_ms > ? AND ts_ms <= ? GROUP BY object_id, writer ON CONFLICT (day, object_id, writer) DO UPDATE SET ${add("rank_days_writers")("n")}`;
    const traits = `INSERT INTO rank_days_traits (day, object_id, writer, class, traits, n, example) SELECT CAST(? AS BIGINT), object_id, writer, class, COALESCE(traits, ''), COUNT(*), MIN(id) FROM writes ${byTime("writes_traits")} WHERE ts_ms > ? AND ts_ms <= ? AND ${TRAITED} GROUP BY object_id, writer, class, COALESCE(traits, '')
       ON CONFLICT (day, object_id, writer, class, traits) DO UPDATE SET ${add("rank_days_traits")("n")}, example = ${this.database.engine.least("rank_days_traits.example", "excluded.example")}`;
    const step = "INSERT INTO rank_days_progress (day, slices) VALUES (?, ?) ON CONFLICT (day) DO UPDATE SET slices = excluded.slices";
    const finish = ["DELETE FROM rank_days_progress WHERE day = ?", "INSERT INTO rank_days_done (day) VALUES (?)"];
    return { sliceSums, details: [fields, writers, traits], step, finish };
  }

  /**
   * Rolls up to `maxSlices` quarter hours of the days in [first, last] that are over by `nowMs` and
   * not rolled up yet, the latest day first, one transaction each (so no writer waits for long). An
   * hour's day counts are added once its last quarter is in, and a day counts once all are. Returns
   * the quarters rolled.
   */
  async roll(first: number, last: number, nowMs: number, maxSlices = Infinity): Promise<number> {
    const done = await this.doneIn(first, last);
    const progress = await this.progressIn(first, last);
    const { sliceSums, details, step, finish } = (this.rollStatements ??= this.rollSql());
    let rolled = 0;
    for (let day = last; day >= first && rolled < maxSlices; day--) {
      if (done.has(day)) continue;
      const over = Math.min(SLICES_PER_DAY, Math.floor((nowMs - SETTLE_MS - day * DAY_MS) / SLICE_MS));
      for (let slice = progress.get(day) ?? 0; slice < over && rolled < maxSlices;) {
        const fromMs = day * DAY_MS + slice * SLICE_MS;
        const hour = day * 24 + Math.floor(slice / SLICES_PER_HOUR);
        // Another process (a replica, the recorder) may have rolled this quarter since the progress above was
        // read: look again holding the write lock (SQLite's, or the roll-up lock on PostgreSQL), or it counts twice.
        const next = await this.database.transaction(async () => {
          const sql = this.sql();
          await this.database.engine.lockUntilCommit(sql, ROLL_LOCK);
          const at = (await this.slicesIn(day))?.slices ?? 0;
          if (at !== slice) return { at, mine: false };
          await sql.run(sliceSums, [hour, fromMs, fromMs + SLICE_MS]);
          for (const statement of details) await sql.run(statement, [day, fromMs, fromMs + SLICE_MS]);
          if ((slice + 1) % SLICES_PER_HOUR === 0) await this.spans.hourDone(hour);
          if (slice + 1 < SLICES_PER_DAY) await sql.run(step, [day, slice + 1]);
          else {
            for (const statement of finish) await sql.run(statement, [day]);
            await this.spans.dayDone(day);
          }
          return { at: slice + 1, mine: true };
        });
        if (next.mine) rolled++;
        // A day just completed: PostgreSQL's planner learns how big the day tables have grown (autovacuum's analyze
        // may come much later), or it reads a page's few objects of 14 days by the days alone, all their rows.
        if (next.mine && next.at === SLICES_PER_DAY) await this.database.engine.analyze(DAY_TABLES);
        // Else someone else moved the day on (or a late write reset it): go on from where it is.
        slice = next.at;
      }
    }
    return rolled;
  }

  /** Rolls up to `maxSlices` quarter hours that are over and have writes around them, the latest day first; returns how many it rolled. */
  async rollPending(nowMs = Date.now(), maxSlices = Infinity): Promise<number> {
    // Two subqueries, each one end of the time index: MIN and MAX in one select would scan all of it.
    const bounds = (await this.sql().get<{ first: number | null; last: number | null }>(
      "SELECT (SELECT MIN(ts_ms) FROM writes) AS first, (SELECT MAX(ts_ms) FROM writes) AS last",
    ))!;
    if (bounds.first === null || bounds.last === null) return 0;
    const last = Math.min(dayOf(bounds.last), dayOf(nowMs));
    return last >= dayOf(bounds.first) ? await this.roll(dayOf(bounds.first), last, nowMs, maxSlices) : 0;
  }

  /** Drops the rollups of days that retention emptied or cut into. */
  async pruned(beforeMs: number): Promise<void> {
    const day = dayOf(beforeMs);
    for (const table of ROLLUP_TABLES) await this.sql().run(`DELETE FROM ${table} WHERE day <= ?`, [day]);
    await this.sql().run("DELETE FROM rank_hours WHERE hour < ?", [(day + 1) * 24]);
    await this.spans.drop(0, day * 24 + 23);
  }
}
