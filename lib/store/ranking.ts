/**
 * The Objects and Field churn rankings over the writes of a range: objects by writes with class
 * counts, top fields, writers, sparklines and timers found in their no-ops, whole days and hours read
 * from the roll-ups, the edges from the writes themselves.
 */
import { MIN_PERIODIC_WRITES, periodicNoop } from "../analysis/periodic";
import type { WriteClass } from "../churn/write-class";
import type { FieldRow, ObjectKey, ObjectRow, ObjectSort } from "../wire/objects";
import type { StoreDatabase } from "./database";
import { CLASS_SUMS, COUNT_COLUMNS } from "./counts";
import { DAY_MS, DayRollups, HOUR_MS } from "./day-rollups";

export interface ObjectFilter {
  cluster?: string;
  group?: string;
  kind?: string;
  namespace?: string;
  cls?: WriteClass;
  fromMs: number;
  toMs: number;
}

/** The filter's object scope (cluster, group, kind, namespace) as `column = ?` clauses on `alias` (e.g. "o.") and their values. */
export function objectScope(filter: ObjectFilter, alias = ""): { clauses: string[]; params: string[] } {
  const clauses: string[] = [];
  const params: string[] = [];
  for (const [column, value] of [
    ["cluster", filter.cluster],
    ["grp", filter.group],
    ["kind", filter.kind],
    ["namespace", filter.namespace],
  ] as const)
    if (value !== undefined) {
      clauses.push(`${alias}${column} = ?`);
      params.push(value);
    }
  return { clauses, params };
}

const CLASS_COLUMN: Record<WriteClass, string> = {
  create: "c_create",
  delete: "c_delete",
  routed: "c_routed",
  unrouted: "c_unrouted",
  "no-op": "c_noop",
  unknown: "c_unknown",
};

export interface RankOptions {
  sort?: ObjectSort;
  /**
   * Heartbeats (Lease renewals) are expected churn: leave out the objects every write of which is one (counting
   * them instead), and rank the others by their writes that are not heartbeats.
   */
  hideHeartbeats?: boolean;
}

const SORT_VALUE: Record<Exclude<ObjectSort, "name">, (g: Record<string, number>) => number> = {
  writes: (g) => g.writes,
  routed: (g) => g.c_routed,
  unrouted: (g) => g.c_unrouted,
  noop: (g) => g.c_noop,
  create: (g) => g.c_create,
  delete: (g) => g.c_delete,
  wasted: (g) => (g.c_noop + g.c_unrouted) / g.writes,
};

/** The no-op writes read per object to look for a timer (the latest ones). */
const PERIODIC_SAMPLE = 500;

const SPARK_BUCKETS = 40;

/** Per-object counts summed over signed parts; an object left with no writes (all subtracted) is not in the range. */
function mergeCounts(parts: { rows: Record<string, number>[]; sign: 1 | -1 }[]): Record<string, number>[] {
  const byId = new Map<number, Record<string, number>>();
  for (const { rows, sign } of parts) {
    for (const row of rows) {
      const sum = byId.get(row.id);
      if (!sum) byId.set(row.id, sign === 1 ? { ...row } : Object.fromEntries(Object.entries(row).map(([k, v]) => [k, k === "id" ? v : -v])));
      else for (const column of COUNT_COLUMNS) sum[column] += sign * row[column];
    }
  }
  return [...byId.values()].filter((row) => row.writes > 0);
}

export class Ranking {
  constructor(
    private readonly database: StoreDatabase,
    private readonly rollups: DayRollups,
  ) {}

  private sql() {
    return this.database.sql();
  }

  private where(filter: ObjectFilter, alias = "w"): { sql: string; params: (string | number)[] } {
    const clauses = [`${alias}.ts_ms > ?`, `${alias}.ts_ms <= ?`];
    const params: (string | number)[] = [filter.fromMs, filter.toMs];
    for (const [column, value] of [
      ["o.cluster", filter.cluster],
      ["o.grp", filter.group],
      ["o.kind", filter.kind],
      ["o.namespace", filter.namespace],
    ] as const) {
      if (value !== undefined) {
        clauses.push(`${column} = ?`);
        params.push(value);
      }
    }
    return { sql: clauses.join(" AND "), params };
  }

  /**
   * Objects ranked by writes (or another count) in (from, to], one page; `cls` keeps objects with at least one write of
   * that class. Heartbeat-only objects left out are counted in `heartbeatOnly`.
   */
  async objects(
    filter: ObjectFilter,
    limit: number,
    offset: number,
    options: RankOptions = {},
  ): Promise<{ total: number; rows: ObjectRow[]; heartbeatOnly: { objects: number; writes: number } }> {
    // One grouping pass over the writes alone (objects are joined for the page only), then ranked here:
    // there are at most as many groups as objects, and total and page come from the same pass.
    const { clauses: objectClauses, params: objectParams } = objectScope(filter);
    const scoped = objectClauses.length > 0;
    const inScope = (column: string) => (scoped ? ` AND ${column} IN (SELECT id FROM objects WHERE ${objectClauses.join(" AND ")})` : "");
    // Whole days and hours from the rollups; part hours at the edges, and hours not rolled up yet, from the writes.
    const plan = await this.rollups.plan(filter.fromMs, filter.toMs);
    const sums = COUNT_COLUMNS.map((c) => `SUM(${c}) AS ${c}`).join(", ");
    const timeIndex = this.database.engine.indexedBy("writes_ts");
    const parts: { rows: Record<string, number>[]; sign: 1 | -1 }[] = [];
    for (const [fromMs, toMs] of plan.raw) {
      // A part hour at an edge, or hours with few writes, are a sliver of the table: read them by time.
      // SQLite's planner would skip-scan the per-object index instead, a seek per object (about 0.1 s on
      // 20,000 objects however few writes), which only pays off past about 200,000 writes.
      const byTime =
        timeIndex !== "" &&
        (toMs - fromMs <= HOUR_MS ||
          (toMs - fromMs <= 2 * DAY_MS &&
            (await this.sql().get<{ n: number }>(`SELECT COUNT(*) AS n FROM writes ${timeIndex} WHERE ts_ms > ? AND ts_ms <= ?`, [fromMs, toMs]))!.n <=
              200_000))
          ? timeIndex
          : "";
      const sql = `SELECT w.object_id AS id, ${CLASS_SUMS} FROM writes w ${byTime} WHERE w.ts_ms > ? AND w.ts_ms <= ?${inScope("w.object_id")} GROUP BY w.object_id`;
      parts.push({ rows: await this.sql().all<Record<string, number>>(sql, [fromMs, toMs, ...objectParams]), sign: 1 });
    }
    // Rolled-up counts, summed by the database in one statement: runs of single hours and spans, each added or subtracted.
    if (plan.counts.length > 0) {
      const reads = plan.counts.map((read) => {
        const columns = COUNT_COLUMNS.map((c) => (read.sign === 1 ? c : `-${c} AS ${c}`)).join(", ");
        return read.hours === 1
          ? { sql: `SELECT object_id, ${columns} FROM rank_hours WHERE hour BETWEEN ? AND ?${inScope("object_id")}`, params: [read.first, read.last] }
          : { sql: `SELECT object_id, ${columns} FROM rank_spans WHERE hours = ? AND first_hour = ?${inScope("object_id")}`, params: [read.hours, read.first] };
      });
      // An object whose writes were all in subtracted hours is not in the range.
      const sql = `SELECT object_id AS id, ${sums} FROM (${reads.map((r) => r.sql).join(" UNION ALL ")}) AS r GROUP BY object_id HAVING SUM(writes) > 0`;
      // Without parallel workers: on two cores, two summed no faster than one, and gathering their halves cost 15 ms (10 M writes).
      parts.push({
        rows: await this.plannedWith("SET LOCAL max_parallel_workers_per_gather = 0", () =>
          this.sql().all<Record<string, number>>(
            sql,
            reads.flatMap((r) => [...r.params, ...objectParams]),
          ),
        ),
        sign: 1,
      });
    }
    const groups = parts.length === 1 ? parts[0].rows : mergeCounts(parts);
    const ofClass = filter.cls ? groups.filter((g) => g[CLASS_COLUMN[filter.cls!]] > 0) : groups;
    const heartbeatOnly = { objects: 0, writes: 0 };
    const kept = options.hideHeartbeats
      ? ofClass.filter((g) => {
          const beats = g.c_heartbeat === g.writes;
          if (beats) {
            heartbeatOnly.objects++;
            heartbeatOnly.writes += g.writes;
          }
          return !beats;
        })
      : ofClass;
    // Most writes first; ties by namespace and name (one read of every object's name, only when there are ties, beats one per tie).
    const sort = options.sort ?? "writes";
    const value =
      sort === "name" ? undefined : sort === "writes" && options.hideHeartbeats ? (g: Record<string, number>) => g.writes - g.c_heartbeat : SORT_VALUE[sort];
    const byCount = (x: Record<string, number>, y: Record<string, number>) => value!(y) - value!(x) || y.writes - x.writes;
    const byNameOf = (names: Map<number, ObjectKey>) => {
      const nameOf = (id: number) => names.get(id) ?? { namespace: "", name: "" };
      return (x: Record<string, number>, y: Record<string, number>) =>
        nameOf(x.id).namespace.localeCompare(nameOf(y.id).namespace) || nameOf(x.id).name.localeCompare(nameOf(y.id).name);
    };
    if (!value) kept.sort(byNameOf(await this.database.keysOf(kept.map((g) => g.id))));
    else {
      kept.sort(byCount);
      // Equal counts go by name: only the runs of them that the page overlaps need their names read.
      let first = Math.min(offset, kept.length);
      let last = Math.min(offset + limit, kept.length) - 1;
      while (first > 0 && first <= last && byCount(kept[first - 1], kept[first]) === 0) first--;
      while (last >= first && last + 1 < kept.length && byCount(kept[last], kept[last + 1]) === 0) last++;
      const run = kept.slice(first, last + 1);
      if (run.some((g, i) => i > 0 && byCount(run[i - 1], g) === 0)) {
        const byName = byNameOf(await this.database.keysOf(run.map((g) => g.id)));
        kept.splice(first, run.length, ...run.sort((x, y) => byCount(x, y) || byName(x, y)));
      }
    }
    const total = kept.length;
    const shown = kept.slice(offset, offset + limit);
    const names = await this.database.keysOf(shown.map((g) => g.id));
    const page: Record<string, number | string>[] = shown.map((g) => {
      const { cluster, group, kind, namespace, name } = names.get(g.id) ?? { cluster: "", group: "", kind: "", namespace: "", name: "" };
      return { ...g, cluster, grp: group, kind, namespace, name };
    });
    const ids = page.map((r) => r.id as number);
    // The page's details: whole days from the daily rollups, the rest from the page's own writes (each
    // object's writes are together in the per-object indexes, so an hour or a day of them is a short read).
    const hourMs = ([first, last]: [number, number]): [number, number] => [first * HOUR_MS, (last + 1) * HOUR_MS];
    const details = (fromWrites: string, fromDays: string) =>
      this.perObject(ids, [
        ...plan.raw.map((range) => ({ sql: fromWrites, params: range, sign: 1 as const })),
        ...plan.hours.map((run) => ({ sql: fromWrites, params: hourMs(run), sign: 1 as const })),
        ...plan.minusHours.map((run) => ({ sql: fromWrites, params: hourMs(run), sign: -1 as const })),
        // Each day of a run named: the day-first keys are then a seek per day and object, not a scan of the days.
        ...plan.rolled.map(([first, last]) => ({
          sql: fromDays.replace("#", Array.from({ length: last - first + 1 }, (_, i) => first + i).join(",")),
          params: [] as number[],
          sign: 1 as const,
        })),
      ]);
    const fields = await details(
      "SELECT object_id AS id, path AS k, COUNT(*) AS n FROM field_changes WHERE object_id IN (%) AND ts_ms > ? AND ts_ms <= ? GROUP BY object_id, path",
      "SELECT object_id AS id, path AS k, SUM(n) AS n FROM rank_days_fields WHERE object_id IN (%) AND day IN (#) GROUP BY object_id, path",
    );
    const writers = await details(
      "SELECT object_id AS id, writer AS k, COUNT(*) AS n FROM writes WHERE object_id IN (%) AND ts_ms > ? AND ts_ms <= ? GROUP BY object_id, writer",
      "SELECT object_id AS id, writer AS k, SUM(n) AS n FROM rank_days_writers WHERE object_id IN (%) AND day IN (#) GROUP BY object_id, writer",
    );
    // Sparkline buckets: a write by its time; over rolled-up hours, an hour's writes by the hour's end.
    const span = Math.max(1, filter.toMs - filter.fromMs);
    const bucket = (tsExpr: string) =>
      `CAST(${this.database.engine.least(`${SPARK_BUCKETS - 1}`, `(${tsExpr} - ${filter.fromMs} - 1) * ${SPARK_BUCKETS} / ${span}`)} AS TEXT)`;
    const spark = await this.perObject(ids, [
      ...plan.raw.map((range) => ({
        sql: `SELECT object_id AS id, ${bucket("ts_ms")} AS k, COUNT(*) AS n FROM writes WHERE object_id IN (%) AND ts_ms > ? AND ts_ms <= ? GROUP BY object_id, k`,
        params: range,
        sign: 1 as const,
      })),
      ...plan.wholeHours.map((run) => ({
        sql: `SELECT object_id AS id, ${bucket(`(hour + 1) * ${HOUR_MS}`)} AS k, SUM(writes) AS n FROM rank_hours WHERE object_id IN (%) AND hour BETWEEN ? AND ? GROUP BY object_id, k`,
        params: run,
        sign: 1 as const,
      })),
    ]);
    const noops = await this.latestNoops(
      page.filter((r) => (r.c_noop as number) >= MIN_PERIODIC_WRITES).map((r) => r.id as number),
      filter,
    );
    const rows = page.map((r): ObjectRow => {
      const id = r.id as number;
      const writes = r.writes as number;
      const sparkline = new Array<number>(SPARK_BUCKETS).fill(0);
      for (const { k, n } of spark.get(id) ?? []) sparkline[Number(k)] = n;
      return {
        cluster: r.cluster as string,
        group: r.grp as string,
        kind: r.kind as string,
        namespace: r.namespace as string,
        name: r.name as string,
        writes,
        create: r.c_create as number,
        delete: r.c_delete as number,
        routed: r.c_routed as number,
        unrouted: r.c_unrouted as number,
        noop: r.c_noop as number,
        unknown: r.c_unknown as number,
        heartbeat: r.c_heartbeat as number,
        wastedRatio: ((r.c_noop as number) + (r.c_unrouted as number)) / writes,
        topFields: (fields.get(id) ?? []).slice(0, 3).map(({ k, n }) => ({ path: k, changes: n })),
        writers: (writers.get(id) ?? []).map(({ k, n }) => ({ writer: k, writes: n })),
        sparkline,
        periodicNoop: noops.has(id) ? periodicNoop(noops.get(id)!) : null,
      };
    });
    return { total, rows, heartbeatOnly };
  }

  /**
   * The objects of the scope that were there when the range began but were not written in it (quiet ones), by
   * namespace and name: the lanes show them after the written ones, since an object that did not change is news too.
   */
  async quietObjects(filter: ObjectFilter, limit: number, offset: number): Promise<{ total: number; keys: ObjectKey[] }> {
    const { clauses, params } = objectScope(filter, "o.");
    // Known by the range's start (listed first, or written before it), not deleted since, and not written in the range.
    const where = `${clauses.length ? `${clauses.join(" AND ")} AND ` : ""}
      (EXISTS (SELECT 1 FROM first_seen f WHERE f.object_id = o.id AND f.ts_ms <= ?) OR EXISTS (SELECT 1 FROM writes w WHERE w.object_id = o.id AND w.ts_ms <= ?))
      AND COALESCE((SELECT w.class FROM writes w WHERE w.object_id = o.id AND w.ts_ms <= ? ORDER BY w.ts_ms DESC, w.id DESC LIMIT 1), '') != 'delete'
      AND NOT EXISTS (SELECT 1 FROM writes w WHERE w.object_id = o.id AND w.ts_ms > ? AND w.ts_ms <= ?)`;
    const args = [...params, filter.fromMs, filter.fromMs, filter.fromMs, filter.fromMs, filter.toMs];
    // One pass: the page with the count of all beside each row; a page past the end (or none asked) counts alone.
    const rows =
      limit > 0
        ? await this.sql().all<ObjectKey & { total: number }>(
            `SELECT cluster, grp AS "group", kind, namespace, name, COUNT(*) OVER () AS total FROM objects o WHERE ${where} ORDER BY namespace, name LIMIT ? OFFSET ?`,
            [...args, limit, offset],
          )
        : [];
    const total = rows[0]?.total ?? (await this.sql().get<{ n: number }>(`SELECT COUNT(*) AS n FROM objects o WHERE ${where}`, args))!.n;
    return { total, keys: rows.map(({ cluster, group, kind, namespace, name }) => ({ cluster, group, kind, namespace, name })) };
  }

  /**
   * Each object's latest no-ops in the range, oldest first, read backwards along its index entries: a few hundred rows
   * each, however long the range. On PostgreSQL all the objects in one statement (a round trip each cost more than the reads).
   */
  private async latestNoops(ids: readonly number[], filter: ObjectFilter): Promise<Map<number, { tsMs: number; writer: string }[]>> {
    const latest = `SELECT ts_ms, writer FROM writes WHERE object_id = ? AND ts_ms > ? AND ts_ms <= ? AND class = 'no-op' ORDER BY ts_ms DESC LIMIT ${PERIODIC_SAMPLE}`;
    const noops = new Map<number, { tsMs: number; writer: string }[]>();
    const add = (id: number, tsMs: number, writer: string) => (noops.get(id) ?? noops.set(id, []).get(id)!).push({ tsMs, writer });
    if (this.database.engine.lateralJoins && ids.length > 0) {
      // A row per object and writer, its times as one text: 25,000 rows to send and parse cost more than reading them.
      // Each object's no-ops newest first, day partition after day partition until it has enough, planned for this
      // range: the planner cannot know that the page's objects are the busiest, and would rather read all their no-ops
      // and sort them (156 ms instead of 18 for a fortnight at 10 M writes; 116 ms with the plan made for any range).
      const objects = this.database.engine.rowsTable(
        "o",
        [["id", "bigint"]],
        ids.map((id) => [id]),
      );
      const rows = await this.plannedWith("SET LOCAL enable_sort = off; SET LOCAL plan_cache_mode = force_custom_plan", () =>
        this.sql().all<{ id: number; writer: string; times: string }>(
          `SELECT o.id, w.writer, string_agg(CAST(w.ts_ms AS TEXT), ',') AS times FROM ${objects.sql} CROSS JOIN LATERAL (${latest.replace("object_id = ?", "object_id = o.id")}) w GROUP BY o.id, w.writer`,
          [...objects.params, filter.fromMs, filter.toMs],
        ),
      );
      for (const r of rows) for (const tsMs of r.times.split(",")) add(r.id, Number(tsMs), r.writer);
    } else
      for (const id of ids)
        for (const r of await this.sql().all<{ ts_ms: number; writer: string }>(latest, [id, filter.fromMs, filter.toMs])) add(id, r.ts_ms, r.writer);
    // Oldest first.
    for (const list of noops.values()) list.sort((x, y) => x.tsMs - y.tsMs);
    return noops;
  }

  /** `read` under planner settings of its own (`SET LOCAL …`, in a transaction of its own), where the planner takes them. */
  private plannedWith<T>(settings: string, read: () => Promise<T>): Promise<T> {
    const opening = this.database.engine.plannerSettings(settings);
    return opening ? this.database.transaction(read, opening) : read();
  }

  /** Objects' names by id, read a few thousand at a time (ids are integers: they go into the statement as text). */
  /** Per object of `ids`: counts by key, summed (signed) over the sources, most first. Each query takes the ids at its `%`, then its params. */
  private async perObject(ids: number[], sources: { sql: string; params: number[]; sign: 1 | -1 }[]): Promise<Map<number, { k: string; n: number }[]>> {
    const out = new Map<number, { k: string; n: number }[]>();
    if (ids.length === 0) return out;
    const marks = ids.map(() => "?").join(",");
    const sums = new Map<number, Map<string, number>>();
    for (const { sql, params, sign } of sources) {
      for (const row of await this.sql().all<{ id: number; k: string; n: number }>(sql.replace("%", marks), [...ids, ...params])) {
        const byKey = sums.get(row.id) ?? new Map<string, number>();
        byKey.set(row.k, (byKey.get(row.k) ?? 0) + sign * row.n);
        sums.set(row.id, byKey);
      }
    }
    // A key whose every count was subtracted (all outside the range) is not in the range.
    for (const [id, byKey] of sums)
      out.set(
        id,
        [...byKey]
          .filter(([, n]) => n > 0)
          .map(([k, n]) => ({ k, n }))
          .sort((a, b) => b.n - a.n || a.k.localeCompare(b.k)),
      );
    return out;
  }

  /** Every cluster/group/kind the store has objects of (for the filters). */
  kinds(): Promise<{ cluster: string; group: string; kind: string }[]> {
    return this.sql().all<{ cluster: string; group: string; kind: string }>(
      'SELECT DISTINCT cluster, grp AS "group", kind FROM objects ORDER BY cluster, "group", kind',
    );
  }

  /**
   * Changed paths across objects, ranked by changes, split by writer; how many of each path's changes came in writes
   * that changed routing (routed) or not (unrouted), and its changes over the range in equal slices.
   */
  async fields(filter: ObjectFilter, limit: number): Promise<FieldRow[]> {
    const { sql, params } = this.where(filter, "f");
    const from = `field_changes f JOIN objects o ON o.id = f.object_id WHERE ${sql}`;
    const all = <T>(query: string) => this.sql().all<T>(query, params);
    const rows = await all<{ path: string; writer: string; n: number }>(`SELECT f.path, f.writer, COUNT(*) AS n FROM ${from} GROUP BY f.path, f.writer`);
    const objects = new Map(
      (await all<{ path: string; objects: number }>(`SELECT f.path, COUNT(DISTINCT f.object_id) AS objects FROM ${from} GROUP BY f.path`)).map((r) => [
        r.path,
        r.objects,
      ]),
    );
    const byPath = new Map<string, FieldRow>();
    for (const r of rows) {
      const row = byPath.get(r.path) ?? {
        path: r.path,
        changes: 0,
        objects: objects.get(r.path) ?? 0,
        routed: 0,
        unrouted: 0,
        writers: [],
        sparkline: new Array<number>(SPARK_BUCKETS).fill(0),
      };
      row.changes += r.n;
      row.writers.push({ writer: r.writer, changes: r.n });
      byPath.set(r.path, row);
    }
    const top = [...byPath.values()].sort((a, b) => b.changes - a.changes || a.path.localeCompare(b.path)).slice(0, limit);
    const shown = new Map(top.map((r) => [r.path, r]));
    const byClass = await all<{ path: string; cls: string; n: number }>(
      `SELECT f.path, w.class AS cls, COUNT(*) AS n FROM field_changes f JOIN objects o ON o.id = f.object_id JOIN writes w ON w.id = f.write_id WHERE ${sql} GROUP BY f.path, w.class`,
    );
    for (const r of byClass) {
      const row = shown.get(r.path);
      if (row && r.cls === "routed") row.routed += r.n;
      else if (row && r.cls === "unrouted") row.unrouted += r.n;
    }
    const span = Math.max(1, filter.toMs - filter.fromMs);
    const bucket = this.database.engine.least(`${SPARK_BUCKETS - 1}`, `CAST((f.ts_ms - ${filter.fromMs} - 1) * ${SPARK_BUCKETS} / ${span} AS INTEGER)`);
    for (const r of await all<{ path: string; k: number; n: number }>(`SELECT f.path, ${bucket} AS k, COUNT(*) AS n FROM ${from} GROUP BY f.path, k`)) {
      const row = shown.get(r.path);
      if (row) row.sparkline[r.k] = r.n;
    }
    return top.map((r) => ({ ...r, writers: r.writers.sort((a, b) => b.changes - a.changes) }));
  }
}
