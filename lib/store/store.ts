/**
 * The object-write store (SQLite via better-sqlite3, WAL): objects, their writes with class, writer,
 * source and changed fields, a row per changed field for field-churn ranking, the last version of
 * each object (for the recorder's diffs), and gaps. Queries answer the Objects, Field churn and
 * timeline views for a time range.
 */
import Database from "better-sqlite3";
import type { FieldChange } from "../churn/diff";
import type { WriteClass } from "../churn/analyze";
import type { Json } from "../churn/json";
import { MIN_PERIODIC_WRITES, periodicNoop } from "../analysis/periodic";
import { AuditStore } from "./audit-store";
import type { FieldRow, ObjectHistory, ObjectKey, ObjectRow, StoredWrite } from "../wire/objects";

import { CLASS_SUMS, COUNT_COLUMNS, DAY_MS, DayRollups, HOUR_MS } from "./day-rollups";

const CLASS_COLUMN: Record<WriteClass, string> = {
  create: "c_create",
  delete: "c_delete",
  routed: "c_routed",
  unrouted: "c_unrouted",
  "no-op": "c_noop",
  unknown: "c_unknown",
};

const SCHEMA = `
CREATE TABLE IF NOT EXISTS objects (id INTEGER PRIMARY KEY, cluster TEXT NOT NULL, grp TEXT NOT NULL, kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, UNIQUE (cluster, grp, kind, namespace, name));
CREATE TABLE IF NOT EXISTS writes (id INTEGER PRIMARY KEY, object_id INTEGER NOT NULL REFERENCES objects(id), ts_ms INTEGER NOT NULL, rv TEXT, class TEXT NOT NULL, writer TEXT NOT NULL, source TEXT NOT NULL, heartbeat INTEGER NOT NULL, changes TEXT NOT NULL, projection TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS writes_ts ON writes (ts_ms);
-- One object's writes by time, and the Objects ranking: grouped by object in index order, class,
-- heartbeat and writer read without touching the rows.
CREATE INDEX IF NOT EXISTS writes_rank ON writes (object_id, ts_ms, class, heartbeat, writer);
CREATE TABLE IF NOT EXISTS field_changes (write_id INTEGER NOT NULL, object_id INTEGER NOT NULL, ts_ms INTEGER NOT NULL, path TEXT NOT NULL, writer TEXT NOT NULL);
CREATE INDEX IF NOT EXISTS field_changes_ts ON field_changes (ts_ms, object_id);
-- Covers the top fields of the ranked objects: their changes in a range are read without the rows.
CREATE INDEX IF NOT EXISTS field_changes_object_path ON field_changes (object_id, ts_ms, path);
CREATE TABLE IF NOT EXISTS first_seen (object_id INTEGER PRIMARY KEY REFERENCES objects(id), ts_ms INTEGER NOT NULL, projection TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS latest (object_id INTEGER PRIMARY KEY REFERENCES objects(id), rv TEXT, body TEXT);
CREATE TABLE IF NOT EXISTS gaps (cluster TEXT NOT NULL, profile TEXT NOT NULL, from_ms INTEGER NOT NULL, to_ms INTEGER, reason TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
-- Audit logs: every completed write request (any resource, any outcome) for the Clients view, and the
-- last version of each object the audit log showed, for no-op detection across files and batches.
CREATE TABLE IF NOT EXISTS audit_requests (
  id INTEGER PRIMARY KEY, request_key TEXT NOT NULL UNIQUE, ts_ms INTEGER NOT NULL, cluster TEXT NOT NULL,
  usr TEXT NOT NULL, user_agent TEXT NOT NULL, verb TEXT NOT NULL, grp TEXT NOT NULL, resource TEXT NOT NULL,
  subresource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, code INTEGER NOT NULL, latency_ms REAL,
  -- 1 changed nothing, 0 changed something, NULL not known (no bodies, or not a profiled kind)
  noop INTEGER
);
CREATE INDEX IF NOT EXISTS audit_requests_ts ON audit_requests (ts_ms, cluster);
-- ts_ms and request_key: when and by which request that version was written, so that neither an older log
-- nor the same request read again is compared with it.
CREATE TABLE IF NOT EXISTS audit_latest (object_id INTEGER PRIMARY KEY, rv TEXT NOT NULL, body TEXT NOT NULL, ts_ms INTEGER, request_key TEXT);
`;

/** What one retention pass dropped: audit requests and object writes older than `beforeMs`. */
export interface PruneCounts {
  beforeMs: number;
  requests: number;
  writes: number;
}

export interface ObjectFilter {
  cluster?: string;
  group?: string;
  kind?: string;
  namespace?: string;
  cls?: WriteClass;
  fromMs: number;
  toMs: number;
}

/** The no-op writes read per object to look for a timer (the latest ones). */
const PERIODIC_SAMPLE = 500;

const SPARK_BUCKETS = 40;

/** How often the background looks for quarter hours to roll up once all are. */
const ROLL_IDLE_MS = 20_000;

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

export class WriteStore {
  readonly db: Database.Database;
  private readonly objectId: Database.Statement;
  private readonly insertObject: Database.Statement;
  private readonly insertWrite: Database.Statement;
  private readonly insertField: Database.Statement;
  private readonly rollups: DayRollups;
  private auditStore?: AuditStore;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma("wal_autocheckpoint = 16384");
    this.db.exec(SCHEMA);
    // Stores made before bodies (and audit requests) were kept gain the columns; their older rows stay without.
    for (const [table, column, type] of [
      ["writes", "body", "TEXT"],
      ["first_seen", "body", "TEXT"],
      ["writes", "verb", "TEXT"],
      ["writes", "subresource", "TEXT"],
      ["writes", "user_agent", "TEXT"],
      ["writes", "code", "INTEGER"],
      ["writes", "latency_ms", "REAL"],
      ["audit_latest", "ts_ms", "INTEGER"],
      ["audit_latest", "request_key", "TEXT"],
    ]) {
      const columns = this.db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
      if (!columns.some((c) => c.name === column)) this.db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
    }
    // A last audited version stored before its time was: the time of its object's last audited write, where one is kept.
    this.db.exec(
      "UPDATE audit_latest SET ts_ms = (SELECT MAX(w.ts_ms) FROM writes w WHERE w.object_id = audit_latest.object_id AND w.source = 'audit') WHERE ts_ms IS NULL",
    );
    this.objectId = this.db.prepare("SELECT id FROM objects WHERE cluster = ? AND grp = ? AND kind = ? AND namespace = ? AND name = ?");
    this.insertObject = this.db.prepare("INSERT INTO objects (cluster, grp, kind, namespace, name) VALUES (?, ?, ?, ?, ?)");
    this.insertWrite = this.db.prepare(
      "INSERT INTO writes (object_id, ts_ms, rv, class, writer, source, heartbeat, changes, projection, body, verb, subresource, user_agent, code, latency_ms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    this.insertField = this.db.prepare("INSERT INTO field_changes (write_id, object_id, ts_ms, path, writer) VALUES (?, ?, ?, ?, ?)");
    this.rollups = new DayRollups(this.db);
  }

  close(): void {
    this.db.close();
  }

  /** Statements run again and again (the recorder's, the audit ingester's), prepared once. */
  private readonly statements = new Map<string, Database.Statement>();
  statement(sql: string): Database.Statement {
    let prepared = this.statements.get(sql);
    if (!prepared) {
      prepared = this.db.prepare(sql);
      this.statements.set(sql, prepared);
    }
    return prepared;
  }

  /** Object ids never change (objects rows are never deleted), so they are looked up once. */
  private readonly ids = new Map<string, number>();

  idOf(key: ObjectKey): number {
    const text = `${key.cluster}\u0000${key.group}\u0000${key.kind}\u0000${key.namespace}\u0000${key.name}`;
    const known = this.ids.get(text);
    if (known !== undefined) return known;
    const row = this.objectId.get(key.cluster, key.group, key.kind, key.namespace, key.name) as { id: number } | undefined;
    const id = row ? row.id : Number(this.insertObject.run(key.cluster, key.group, key.kind, key.namespace, key.name).lastInsertRowid);
    if (this.ids.size > 200_000) this.ids.clear();
    this.ids.set(text, id);
    return id;
  }

  record(key: ObjectKey, write: StoredWrite): void {
    const objectId = this.idOf(key);
    const id = Number(
      this.insertWrite.run(
        objectId,
        write.tsMs,
        write.resourceVersion ?? null,
        write.cls,
        write.writer,
        write.source,
        write.heartbeat ? 1 : 0,
        JSON.stringify(write.changes),
        JSON.stringify(write.projection),
        write.body === undefined ? null : JSON.stringify(write.body),
        write.request?.verb ?? null,
        write.request?.subresource ?? null,
        write.request?.userAgent ?? null,
        write.request?.code ?? null,
        write.request?.latencyMs ?? null,
      ).lastInsertRowid,
    );
    for (const change of write.changes) this.insertField.run(id, objectId, write.tsMs, change.path, write.writer);
    this.rollups.written(write.tsMs);
  }

  /** The projection of an object as first seen (a list, or a snapshot's first version), before any recorded write. */
  recordFirstSeen(key: ObjectKey, tsMs: number, projection: Record<string, string>, body?: Json): void {
    this
      // An older log read later moves it back: it is where the object's known history starts.
      .statement(
        "INSERT INTO first_seen (object_id, ts_ms, projection, body) VALUES (?, ?, ?, ?) ON CONFLICT (object_id) DO UPDATE SET ts_ms = excluded.ts_ms, projection = excluded.projection, body = excluded.body WHERE excluded.ts_ms < first_seen.ts_ms",
      )
      .run(this.idOf(key), tsMs, JSON.stringify(projection), body === undefined ? null : JSON.stringify(body));
  }

  /**
   * Every object written in (fromMs, toMs] with what it takes to rebuild its versions: its first-seen
   * body and all its writes up to toMs, oldest first. At most `maxWrites` writes, else null.
   */
  histories(fromMs: number, toMs: number, maxWrites: number): ObjectHistory[] | null {
    const ids = (this.db.prepare("SELECT DISTINCT object_id AS id FROM writes WHERE ts_ms > ? AND ts_ms <= ?").all(fromMs, toMs) as { id: number }[]).map(
      (r) => r.id,
    );
    const objectRow = this.db.prepare(
      "SELECT o.cluster, o.grp, o.kind, o.namespace, o.name, f.ts_ms AS seenMs, f.body AS seenBody FROM objects o LEFT JOIN first_seen f ON f.object_id = o.id WHERE o.id = ?",
    );
    const writeRows = this.db.prepare("SELECT ts_ms, class, writer, changes, body FROM writes WHERE object_id = ? AND ts_ms <= ? ORDER BY ts_ms, id");
    const out: ObjectHistory[] = [];
    let total = 0;
    for (const id of ids) {
      const o = objectRow.get(id) as {
        cluster: string;
        grp: string;
        kind: string;
        namespace: string;
        name: string;
        seenMs: number | null;
        seenBody: string | null;
      };
      const writes = (writeRows.all(id, toMs) as { ts_ms: number; class: WriteClass; writer: string; changes: string; body: string | null }[]).map((w) => ({
        tsMs: w.ts_ms,
        cls: w.class,
        writer: w.writer,
        changes: JSON.parse(w.changes) as FieldChange[],
        body: w.body === null ? undefined : (JSON.parse(w.body) as Json),
      }));
      total += writes.length;
      if (total > maxWrites) return null;
      out.push({
        key: { cluster: o.cluster, group: o.grp, kind: o.kind, namespace: o.namespace, name: o.name },
        firstSeen: o.seenBody === null || o.seenMs === null ? undefined : { tsMs: o.seenMs, body: JSON.parse(o.seenBody) as Json },
        writes,
      });
    }
    return out;
  }

  /** The last version the recorder saw of an object (null body: deleted). */
  latest(key: ObjectKey): { resourceVersion: string; body: string | null } | undefined {
    const row = this.statement(
      "SELECT l.rv, l.body FROM latest l JOIN objects o ON o.id = l.object_id WHERE o.cluster = ? AND o.grp = ? AND o.kind = ? AND o.namespace = ? AND o.name = ?",
    ).get(key.cluster, key.group, key.kind, key.namespace, key.name) as { rv: string; body: string | null } | undefined;
    return row ? { resourceVersion: row.rv, body: row.body } : undefined;
  }

  setLatest(key: ObjectKey, resourceVersion: string, body: string | null): void {
    this.statement(
      "INSERT INTO latest (object_id, rv, body) VALUES (?, ?, ?) ON CONFLICT (object_id) DO UPDATE SET rv = excluded.rv, body = excluded.body",
    ).run(this.idOf(key), resourceVersion, body);
  }

  /** Objects of a kind on a cluster that the recorder last saw alive. */
  liveKeys(cluster: string, group: string, kind: string): ObjectKey[] {
    return this.db
      .prepare(
        'SELECT o.cluster, o.grp AS "group", o.kind, o.namespace, o.name FROM latest l JOIN objects o ON o.id = l.object_id WHERE o.cluster = ? AND o.grp = ? AND o.kind = ? AND l.body IS NOT NULL',
      )
      .all(cluster, group, kind) as ObjectKey[];
  }

  openGap(cluster: string, profile: string, fromMs: number, reason: string): void {
    const open = this.statement("SELECT 1 FROM gaps WHERE cluster = ? AND profile = ? AND to_ms IS NULL").get(cluster, profile);
    if (!open) this.statement("INSERT INTO gaps (cluster, profile, from_ms, to_ms, reason) VALUES (?, ?, ?, NULL, ?)").run(cluster, profile, fromMs, reason);
  }

  closeGap(cluster: string, profile: string, toMs: number): void {
    this.statement("UPDATE gaps SET to_ms = ? WHERE cluster = ? AND profile = ? AND to_ms IS NULL").run(toMs, cluster, profile);
  }

  gaps(fromMs: number, toMs: number): { cluster: string; profile: string; fromMs: number; toMs: number | null; reason: string }[] {
    return (
      this.statement("SELECT cluster, profile, from_ms, to_ms, reason FROM gaps WHERE from_ms <= ? AND (to_ms IS NULL OR to_ms > ?) ORDER BY from_ms").all(
        toMs,
        fromMs,
      ) as { cluster: string; profile: string; from_ms: number; to_ms: number | null; reason: string }[]
    ).map((g) => ({
      cluster: g.cluster,
      profile: g.profile,
      fromMs: g.from_ms,
      toMs: g.to_ms,
      reason: g.reason,
    }));
  }

  /** Drops writes (and audit requests) older than `beforeMs` (retention); objects and their last versions stay. */
  prune(beforeMs: number): PruneCounts {
    return this.batch(() => {
      this.db.prepare("DELETE FROM field_changes WHERE ts_ms < ?").run(beforeMs);
      const requests = this.db.prepare("DELETE FROM audit_requests WHERE ts_ms < ?").run(beforeMs).changes;
      this.rollups.pruned(beforeMs);
      return { beforeMs, requests, writes: this.db.prepare("DELETE FROM writes WHERE ts_ms < ?").run(beforeMs).changes };
    });
  }

  /** The audit side of this store (requests, last audited versions). */
  audit(): AuditStore {
    return (this.auditStore ??= new AuditStore(this));
  }

  /** Rolls up to `maxSlices` quarter hours of the days that are over, for the Objects ranking; returns how many. */
  rollPending(nowMs = Date.now(), maxSlices = Infinity): number {
    return this.rollups.rollPending(nowMs, maxSlices);
  }

  /**
   * Keeps the rollups caught up while the store is open: a quarter hour at a time, each followed by a
   * pause twice as long as it took. A backlog (a store filled before anything rolled it up: 14 days of
   * 10 M writes take about two minutes of steps) then catches up in minutes, and other writers to the
   * store get the lock two thirds of the time. With nothing pending it looks again after `idleMs`.
   * `keepAlive` lets the timer hold the thread open (the dashboard's roll-up thread has nothing else to
   * do). Returns what stops it.
   */
  keepRolledUp(onError: (error: Error) => void, { idleMs = ROLL_IDLE_MS, keepAlive = false } = {}): () => void {
    let timer: NodeJS.Timeout | undefined;
    const step = () => {
      if (!this.db.open) return;
      const startMs = performance.now();
      let rolled = 0;
      try {
        rolled = this.rollPending(Date.now(), 1);
      } catch (error) {
        onError(error as Error);
      }
      timer = setTimeout(step, rolled > 0 ? Math.ceil(2 * (performance.now() - startMs)) : idleMs);
      if (!keepAlive) timer.unref();
    };
    timer = setTimeout(step, 0);
    if (!keepAlive) timer.unref();
    return () => clearTimeout(timer);
  }

  private prunedAtMs = 0;

  /** Retention where no recorder runs (audit logs only): at most once an hour per process; null when not due. */
  pruneIfDue(retentionMs: number, nowMs = Date.now()): PruneCounts | null {
    if (nowMs - this.prunedAtMs < 3_600_000) return null;
    this.prunedAtMs = nowMs;
    return this.prune(nowMs - retentionMs);
  }

  sizeBytes(): number {
    const pages = this.db.pragma("page_count", { simple: true }) as number;
    const size = this.db.pragma("page_size", { simple: true }) as number;
    return pages * size;
  }

  /**
   * Runs `work` in one transaction (thousands of inserts per second instead of dozens). It takes the
   * write lock first (IMMEDIATE): a transaction that read before another process (the dashboard
   * rolling up, the recorder) wrote cannot write any more, and fails at once instead of waiting.
   */
  batch<T>(work: () => T): T {
    this.rollups.forget();
    try {
      return this.db.transaction(work).immediate();
    } finally {
      this.rollups.forget();
    }
  }

  getMeta(key: string): string | undefined {
    return (this.statement("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined)?.value;
  }

  setMeta(key: string, value: string): void {
    this.statement("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, value);
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

  /** Objects ranked by writes in (from, to], one page; `cls` keeps objects with at least one write of that class. */
  objects(filter: ObjectFilter, limit: number, offset: number): { total: number; rows: ObjectRow[] } {
    // One grouping pass over the writes alone (objects are joined for the page only), then ranked here:
    // there are at most as many groups as objects, and total and page come from the same pass.
    const scoped = filter.cluster !== undefined || filter.group !== undefined || filter.kind !== undefined || filter.namespace !== undefined;
    const objectClauses: string[] = [];
    const objectParams: string[] = [];
    for (const [column, value] of [
      ["cluster", filter.cluster],
      ["grp", filter.group],
      ["kind", filter.kind],
      ["namespace", filter.namespace],
    ] as const) {
      if (value !== undefined) {
        objectClauses.push(`${column} = ?`);
        objectParams.push(value);
      }
    }
    const inScope = (column: string) => (scoped ? ` AND ${column} IN (SELECT id FROM objects WHERE ${objectClauses.join(" AND ")})` : "");
    // Whole days and hours from the rollups; part hours at the edges, and hours not rolled up yet, from the writes.
    const plan = this.rollups.plan(filter.fromMs, filter.toMs);
    const sums = COUNT_COLUMNS.map((c) => `SUM(${c}) AS ${c}`).join(", ");
    const countInRange = this.statement("SELECT COUNT(*) AS n FROM writes INDEXED BY writes_ts WHERE ts_ms > ? AND ts_ms <= ?");
    const rollup = (sql: string, runs: [number, number][], sign: 1 | -1) =>
      runs.map((run) => ({ rows: this.db.prepare(sql).all(...run, ...objectParams) as Record<string, number>[], sign }));
    const parts: { rows: Record<string, number>[]; sign: 1 | -1 }[] = [
      ...plan.raw.map(([fromMs, toMs]) => {
        // A part hour at an edge, or hours with few writes, are a sliver of the table: read them by time.
        // The planner would skip-scan the per-object index instead, a seek per object (about 0.1 s on
        // 20,000 objects however few writes), which only pays off past about 200,000 writes.
        const byTime =
          toMs - fromMs <= HOUR_MS || (toMs - fromMs <= 2 * DAY_MS && (countInRange.get(fromMs, toMs) as { n: number }).n <= 200_000)
            ? "INDEXED BY writes_ts"
            : "";
        const sql = `SELECT w.object_id AS id, ${CLASS_SUMS} FROM writes w ${byTime} WHERE w.ts_ms > ? AND w.ts_ms <= ?${inScope("w.object_id")} GROUP BY w.object_id`;
        return { rows: this.db.prepare(sql).all(fromMs, toMs, ...objectParams) as Record<string, number>[], sign: 1 as const };
      }),
      ...rollup(`SELECT object_id AS id, ${sums} FROM rank_days WHERE day BETWEEN ? AND ?${inScope("object_id")} GROUP BY object_id`, plan.rolled, 1),
      ...rollup(`SELECT object_id AS id, ${sums} FROM rank_hours WHERE hour BETWEEN ? AND ?${inScope("object_id")} GROUP BY object_id`, plan.hours, 1),
      ...rollup(`SELECT object_id AS id, ${sums} FROM rank_hours WHERE hour BETWEEN ? AND ?${inScope("object_id")} GROUP BY object_id`, plan.minusHours, -1),
    ];
    const groups = parts.length === 1 ? parts[0].rows : mergeCounts(parts);
    const kept = filter.cls ? groups.filter((g) => g[CLASS_COLUMN[filter.cls!]] > 0) : groups;
    const keyOf = this.statement("SELECT cluster, grp, kind, namespace, name FROM objects WHERE id = ?");
    // Most writes first; ties by namespace and name (one read of every object's name beats one per tie).
    let names: Map<number, { namespace: string; name: string }> | undefined;
    const nameOf = (id: number) =>
      (names ??= new Map(
        (this.statement("SELECT id, namespace, name FROM objects").all() as { id: number; namespace: string; name: string }[]).map((r) => [r.id, r]),
      )).get(id) ?? {
        namespace: "",
        name: "",
      };
    kept.sort(
      (x, y) => y.writes - x.writes || nameOf(x.id).namespace.localeCompare(nameOf(y.id).namespace) || nameOf(x.id).name.localeCompare(nameOf(y.id).name),
    );
    const total = kept.length;
    const page = kept.slice(offset, offset + limit).map((g) => ({ ...g, ...(keyOf.get(g.id) as Record<string, string>) })) as Record<string, number | string>[];
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
    const fields = details(
      "SELECT object_id AS id, path AS k, COUNT(*) AS n FROM field_changes WHERE object_id IN (%) AND ts_ms > ? AND ts_ms <= ? GROUP BY object_id, path",
      "SELECT object_id AS id, path AS k, SUM(n) AS n FROM rank_days_fields WHERE object_id IN (%) AND day IN (#) GROUP BY object_id, path",
    );
    const writers = details(
      "SELECT object_id AS id, writer AS k, COUNT(*) AS n FROM writes WHERE object_id IN (%) AND ts_ms > ? AND ts_ms <= ? GROUP BY object_id, writer",
      "SELECT object_id AS id, writer AS k, SUM(n) AS n FROM rank_days_writers WHERE object_id IN (%) AND day IN (#) GROUP BY object_id, writer",
    );
    // Sparkline buckets: a write by its time; over rolled-up hours, an hour's writes by the hour's end.
    const span = Math.max(1, filter.toMs - filter.fromMs);
    const bucket = (tsExpr: string) => `CAST(MIN(${SPARK_BUCKETS - 1}, (${tsExpr} - ${filter.fromMs} - 1) * ${SPARK_BUCKETS} / ${span}) AS TEXT)`;
    const spark = this.perObject(ids, [
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
    const noops = new Map<number, { tsMs: number; writer: string }[]>();
    const withNoops = page.filter((r) => (r.c_noop as number) >= MIN_PERIODIC_WRITES).map((r) => r.id as number);
    // Each object's latest no-ops, read backwards along its index entries: a few hundred rows, however long the range.
    const latestNoops = this.statement(
      `SELECT ts_ms, writer FROM writes WHERE object_id = ? AND ts_ms > ? AND ts_ms <= ? AND class = 'no-op' ORDER BY ts_ms DESC LIMIT ${PERIODIC_SAMPLE}`,
    );
    for (const id of withNoops) {
      const latest = latestNoops.all(id, filter.fromMs, filter.toMs) as { ts_ms: number; writer: string }[];
      noops.set(
        id,
        latest.reverse().map((r) => ({ tsMs: r.ts_ms, writer: r.writer })),
      );
    }
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
    return { total, rows };
  }

  /** Per object of `ids`: counts by key, summed (signed) over the sources, most first. Each query takes the ids at its `%`, then its params. */
  private perObject(ids: number[], sources: { sql: string; params: number[]; sign: 1 | -1 }[]): Map<number, { k: string; n: number }[]> {
    const out = new Map<number, { k: string; n: number }[]>();
    if (ids.length === 0) return out;
    const marks = ids.map(() => "?").join(",");
    const sums = new Map<number, Map<string, number>>();
    for (const { sql, params, sign } of sources) {
      for (const row of this.db.prepare(sql.replace("%", marks)).all(...ids, ...params) as { id: number; k: string; n: number }[]) {
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
  kinds(): { cluster: string; group: string; kind: string }[] {
    return this.db.prepare('SELECT DISTINCT cluster, grp AS "group", kind FROM objects ORDER BY cluster, grp, kind').all() as {
      cluster: string;
      group: string;
      kind: string;
    }[];
  }

  /** Changed paths across objects, ranked by changes, split by writer. */
  fields(filter: ObjectFilter, limit: number): FieldRow[] {
    const { sql, params } = this.where(filter, "f");
    const rows = this.db
      .prepare(
        `SELECT f.path, f.writer, COUNT(*) AS n, COUNT(DISTINCT f.object_id) AS objects FROM field_changes f JOIN objects o ON o.id = f.object_id WHERE ${sql} GROUP BY f.path, f.writer`,
      )
      .all(...params) as { path: string; writer: string; n: number; objects: number }[];
    const objects = new Map(
      (
        this.db
          .prepare(
            `SELECT f.path, COUNT(DISTINCT f.object_id) AS objects FROM field_changes f JOIN objects o ON o.id = f.object_id WHERE ${sql} GROUP BY f.path`,
          )
          .all(...params) as { path: string; objects: number }[]
      ).map((r) => [r.path, r.objects]),
    );
    const byPath = new Map<string, FieldRow>();
    for (const r of rows) {
      const row = byPath.get(r.path) ?? { path: r.path, changes: 0, objects: objects.get(r.path) ?? 0, writers: [] };
      row.changes += r.n;
      row.writers.push({ writer: r.writer, changes: r.n });
      byPath.set(r.path, row);
    }
    return [...byPath.values()]
      .map((r) => ({ ...r, writers: r.writers.sort((a, b) => b.changes - a.changes) }))
      .sort((a, b) => b.changes - a.changes || a.path.localeCompare(b.path))
      .slice(0, limit);
  }

  /** One object's writes in (from, to], oldest first. */
  writesOf(key: ObjectKey, fromMs: number, toMs: number, limit: number): (StoredWrite & { seq: number })[] {
    const row = this.objectId.get(key.cluster, key.group, key.kind, key.namespace, key.name) as { id: number } | undefined;
    if (!row) return [];
    const rows = this.db
      .prepare(
        "SELECT id, ts_ms, rv, class, writer, source, heartbeat, changes, projection, verb, subresource, user_agent, code, latency_ms FROM writes WHERE object_id = ? AND ts_ms > ? AND ts_ms <= ? ORDER BY ts_ms, id LIMIT ?",
      )
      .all(row.id, fromMs, toMs, limit) as Record<string, string | number | null>[];
    return rows.map((r) => ({
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
    }));
  }

  /** The projection just before `fromMs` (the state band's starting value). */
  projectionBefore(key: ObjectKey, fromMs: number): Record<string, string> | undefined {
    const row = this.objectId.get(key.cluster, key.group, key.kind, key.namespace, key.name) as { id: number } | undefined;
    if (!row) return undefined;
    const hit = (this.statement("SELECT projection FROM writes WHERE object_id = ? AND ts_ms <= ? ORDER BY ts_ms DESC, id DESC LIMIT 1").get(row.id, fromMs) ??
      this.statement("SELECT projection FROM first_seen WHERE object_id = ? AND ts_ms <= ?").get(row.id, fromMs)) as { projection: string } | undefined;
    return hit ? (JSON.parse(hit.projection) as Record<string, string>) : undefined;
  }
}
