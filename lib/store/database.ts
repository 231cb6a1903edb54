/**
 * The store's database on either engine (a SQLite file, or a PostgreSQL database: engine/), with its versioned
 * schema (SQLite's steps here, PostgreSQL's in engine/postgres-schema.ts), object ids, meta values and transactions.
 * A transaction is the async context it runs in: every statement a repository runs through `sql()` inside it is the
 * transaction's, so repositories take no transaction argument and two transactions of one process never mix.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type Database from "better-sqlite3";
import { objectKeyText } from "../objects/key";
import type { ObjectKey } from "../wire/objects";
import { openPostgres } from "./engine/open-postgres";
import { insertRows } from "./engine/insert-rows";
import { ensurePartitions, partitionDayOf, partitionName, type PartitionedTable } from "./engine/partitions";
import type { PostgresSettings } from "./engine/postgres";
import { SqliteEngine } from "./engine/sqlite";
import type { SqlEngine, SqlQueries, SqlValue } from "./engine/types";
import { addMissingColumns, migrate, type Migration } from "./migrator";
import { API_CALLS_SQLITE } from "./api-calls";
import { CHANGES_TABLE } from "./changes";
import { RECORDER_LEASES } from "./leases";
import { MOVES } from "./moves";
import { TRAITS_INDEX, TRAITS_MIGRATION } from "./traits";
import type { StoreConnection } from "./types";

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

const STORE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "objects, writes, field changes, first-seen and latest versions, gaps, meta, audit requests",
    // Also the step of every store made before migrations were versioned: what it lacks is added, its rows kept.
    apply(db) {
      db.exec(SCHEMA);
      addMissingColumns(db, [
        ["writes", "body", "TEXT"],
        ["first_seen", "body", "TEXT"],
        ["writes", "verb", "TEXT"],
        ["writes", "subresource", "TEXT"],
        ["writes", "user_agent", "TEXT"],
        ["writes", "code", "INTEGER"],
        ["writes", "latency_ms", "REAL"],
        ["writes", "request_key", "TEXT"],
        ["audit_latest", "ts_ms", "INTEGER"],
        ["audit_latest", "request_key", "TEXT"],
      ]);
      // A last audited version stored before its time was: the time of its object's last audited write, where one is kept.
      db.exec(
        "UPDATE audit_latest SET ts_ms = (SELECT MAX(w.ts_ms) FROM writes w WHERE w.object_id = audit_latest.object_id AND w.source = 'audit') WHERE ts_ms IS NULL",
      );
    },
  },
  {
    version: 2,
    description: "audit requests keep their precondition, their completion order and what their no-op flag rests on; watched writes the version they followed",
    apply(db) {
      addMissingColumns(db, [
        // objectRef.resourceVersion: the version the client sent (an update's precondition)
        ["audit_requests", "precondition", "TEXT"],
        // stageTimestamp in microseconds: one object's writes in the order they took effect
        ["audit_requests", "order_us", "INTEGER"],
        // what the noop flag rests on (lib/churn/preconditions.ts NoopEvidence); NULL where not known or not kept
        ["audit_requests", "evidence", "TEXT"],
        // a watched write's: the version it directly followed, which a Metadata-level request names as its precondition
        ["writes", "prev_rv", "TEXT"],
      ]);
      db.exec("UPDATE audit_requests SET order_us = ts_ms * 1000 WHERE order_us IS NULL");
      db.exec("CREATE INDEX IF NOT EXISTS audit_requests_object ON audit_requests (cluster, grp, resource, namespace, name, order_us)");
      // An audited write found by its request, when a later request decides its class.
      db.exec("CREATE INDEX IF NOT EXISTS writes_request ON writes (request_key) WHERE request_key IS NOT NULL");
    },
  },
  {
    version: 3,
    description: "audit bucket sources: each object read (the checkpoint a restart resumes from) and each source's last poll",
    apply(db) {
      db.exec(`
        CREATE TABLE IF NOT EXISTS audit_bucket_objects (
          source TEXT NOT NULL, object_key TEXT NOT NULL, etag TEXT NOT NULL, size INTEGER NOT NULL, modified_ms INTEGER NOT NULL,
          read_ms INTEGER NOT NULL,
          -- read, problems (read, some lines not), failed (could not be read: retried at the next poll) or skipped (older than retention)
          outcome TEXT NOT NULL, detail TEXT NOT NULL, requests INTEGER NOT NULL,
          PRIMARY KEY (source, object_key)
        );
        CREATE TABLE IF NOT EXISTS audit_bucket_sources (
          source TEXT PRIMARY KEY, polls INTEGER NOT NULL, last_poll_ms INTEGER, last_success_ms INTEGER, listed INTEGER NOT NULL,
          error TEXT, error_ms INTEGER,
          -- every object up to this key was done and is old enough not to change: later polls list after it
          list_after TEXT
        );
      `);
    },
  },
  {
    version: 4,
    description: "the writes that can move an object's projection, with it, in an index of their own: the lanes read it without the rows",
    apply(db) {
      db.exec(`CREATE INDEX IF NOT EXISTS writes_moves ON writes (object_id, ts_ms, id, class, projection) WHERE ${MOVES}`);
    },
  },
  {
    version: 5,
    description: "recorder leases: which process records each cluster",
    apply(db) {
      db.exec(RECORDER_LEASES);
    },
  },
  {
    version: 6,
    description: "recorded changes of workloads and GitOps revisions, and what each workload ran when first seen",
    apply: (db) => db.exec(CHANGES_TABLE),
  },
  {
    version: 7,
    description: "every API request counted per client and minute, reads and watches included, with each watch's lifetime",
    apply: (db) => db.exec(API_CALLS_SQLITE),
  },
  {
    version: 8,
    description: TRAITS_MIGRATION,
    apply(db) {
      addMissingColumns(db, [["writes", "traits", "TEXT"]]);
      db.exec(TRAITS_INDEX);
    },
  },
];

/** The object store's schema version this Churnscope migrates files to. */
export const STORE_SCHEMA_VERSION = STORE_MIGRATIONS.at(-1)!.version;

/** Where the store lives: a SQLite file, or a PostgreSQL database (`setting` names where its URL came from, for messages). */
export type StoreTarget = { engine: "sqlite"; path: string } | { engine: "postgres"; settings: PostgresSettings; setting?: string };

/** One transaction's context: its statements, and what was learnt in it that a rollback takes back. */
interface TransactionScope {
  database: StoreDatabase;
  tx: SqlQueries;
  /** the transaction's statements, each run after the rows inserted later (`insertLater`) are in */
  queries: SqlQueries;
  /** rows to insert, by statement (table, columns and conflict clause): stored before the next statement, or the commit */
  pending: Map<string, { head: string; tail: string; rows: SqlValue[][]; byKey: Map<string, number> }>;
  /** values repositories keep for the transaction's length (what the roll-ups know of its days, say) */
  values: Map<object, unknown>;
  /** run when it rolls back: forget what memory learnt inside it */
  onRollback: (() => void)[];
}

type WaitingRows = Pick<TransactionScope, "database" | "pending" | "tx">;

/** The rows waiting to be inserted, as the engine stores them fastest (on PostgreSQL every table's in one round trip). */
async function flushPending(held: WaitingRows): Promise<void> {
  if (held.pending.size === 0) return;
  const groups = [...held.pending.values()];
  held.pending.clear();
  await held.database.engine.insertWaiting(held.tx, groups);
}

/** A transaction's statements: the rows waiting to be inserted go first, so every statement sees them. */
function queriesOf(held: WaitingRows): SqlQueries {
  const first = () => flushPending(held);
  return {
    all: async (sql, params) => (await first(), held.tx.all(sql, params)),
    get: async (sql, params) => (await first(), held.tx.get(sql, params)),
    run: async (sql, params) => (await first(), held.tx.run(sql, params)),
    exec: async (sql) => (await first(), held.tx.exec(sql)),
  };
}

const scope = new AsyncLocalStorage<TransactionScope>();

/** Where a SQLite transaction keeps the last write id it gave (`nextWriteId`). */
const SQLITE_WRITE_IDS = {};

export class StoreDatabase implements StoreConnection {
  private constructor(readonly engine: SqlEngine) {}

  /** Opens the store's database and brings its schema up to this version (or refuses one from a newer Churnscope). */
  static async open(target: StoreTarget | string): Promise<StoreDatabase> {
    if (typeof target === "string") target = { engine: "sqlite", path: target };
    if (target.engine === "postgres") {
      return new StoreDatabase(await openPostgres(target.settings, target.setting));
    }
    const engine = new SqliteEngine(target.path);
    try {
      engine.db.pragma("wal_autocheckpoint = 16384");
      migrate(engine.db, "the object store", STORE_MIGRATIONS);
    } catch (error) {
      await engine.close();
      throw error;
    }
    return new StoreDatabase(engine);
  }

  /** The SQLite connection, for what reads the file directly (its tests, the copy to PostgreSQL); none on PostgreSQL. */
  get db(): Database.Database {
    if (!(this.engine instanceof SqliteEngine)) throw new Error("the store is on PostgreSQL: there is no SQLite file");
    return this.engine.db;
  }

  private closed = false;
  get isOpen(): boolean {
    return !this.closed;
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.engine.close();
  }

  private current(): TransactionScope | undefined {
    const held = scope.getStore();
    return held?.database === this ? held : undefined;
  }

  /** The statements to run: the current transaction's inside one, else the engine's (each its own). */
  sql(): SqlQueries {
    return this.current()?.queries ?? this.engine;
  }

  /**
   * Inserts a row with the current transaction's next statement, or at its commit, together with the others of the same
   * statement (one round trip for a burst's writes instead of one per write). `head`: `INSERT INTO t (a, b)`; `tail`:
   * what follows the values (`ON CONFLICT …`), which must not meet two rows of one burst: a row with the `replaces` of
   * one waiting replaces it.
   */
  insertLater(head: string, row: SqlValue[], tail = "", replaces?: string): void {
    const held = this.current();
    if (!held) throw new Error("insertLater outside a transaction");
    const key = `${head}\u0000${tail}`;
    const group = held.pending.get(key) ?? held.pending.set(key, { head, tail, rows: [], byKey: new Map() }).get(key)!;
    const at = replaces === undefined ? undefined : group.byKey.get(replaces);
    if (at !== undefined) group.rows[at] = row;
    else {
      if (replaces !== undefined) group.byKey.set(replaces, group.rows.length);
      group.rows.push(row);
    }
  }

  /** One row, waiting for the current transaction's next statement (`insertLater`), or at once outside one. */
  async insertRow(head: string, row: SqlValue[], tail = "", replaces?: string): Promise<void> {
    if (this.inTransaction) this.insertLater(head, row, tail, replaces);
    else await insertRows(this.sql(), head, [row], tail);
  }

  /** Ids the writes table's sequence handed this process, taken a block at a time (PostgreSQL). */
  private readonly writeIds: number[] = [];

  /**
   * The next id for a write row, inside a transaction. On PostgreSQL from the sequence, whose ids a rolled back
   * transaction took are not used again; on SQLite the highest id the transaction found, counted on (its write lock
   * keeps other processes from inserting meanwhile, as SQLite's own next rowid would be).
   */
  async nextWriteId(): Promise<number> {
    if (!this.engine.sequences) {
      const counter = this.transactionValue(SQLITE_WRITE_IDS, () => ({ last: -1 }));
      if (!counter) throw new Error("nextWriteId outside a transaction");
      if (counter.last < 0) counter.last = (await this.sql().get<{ id: number }>("SELECT COALESCE(MAX(id), 0) AS id FROM writes"))!.id;
      return ++counter.last;
    }
    if (this.writeIds.length === 0)
      for (const { id } of await this.sql().all<{ id: number }>("SELECT nextval('writes_id_seq') AS id FROM generate_series(1, 1000)")) this.writeIds.push(id);
    return this.writeIds.shift()!;
  }

  get inTransaction(): boolean {
    return this.current() !== undefined;
  }

  /** A value kept for the current transaction's length (made by `init` on first use); undefined outside one. */
  transactionValue<T>(owner: object, init: () => T): T | undefined {
    const held = this.current();
    if (!held) return undefined;
    if (!held.values.has(owner)) held.values.set(owner, init());
    return held.values.get(owner) as T;
  }

  /**
   * Runs `work` in one transaction (thousands of inserts per second instead of dozens); inside one already, in
   * that one. On SQLite it takes the write lock first: a transaction that read before another process wrote
   * cannot fail halfway. `opening`: statements without parameters run first (the engine's), in the outer transaction too.
   */
  transaction<T>(work: () => Promise<T>, opening?: string): Promise<T> {
    if (this.current()) return opening ? this.sql().exec(opening).then(work) : work();
    const onRollback: (() => void)[] = [];
    return this.engine
      .transaction((tx) => {
        const waiting: WaitingRows = { database: this, pending: new Map(), tx };
        const held: TransactionScope = { ...waiting, queries: queriesOf(waiting), values: new Map(), onRollback };
        return scope.run(held, async () => {
          const result = await work();
          await flushPending(held);
          return result;
        });
      }, opening)
      .catch((error: unknown) => {
        for (const forget of onRollback) forget();
        throw error;
      });
  }

  /** What memory learns inside a transaction and must forget if it rolls back. */
  onRollback(forget: () => void): void {
    this.current()?.onRollback.push(forget);
  }

  /** Object ids never change (objects rows are never deleted), so they are looked up once. */
  private readonly ids = new Map<string, number>();

  /** The object's id when this process knows it already (no statement, and no await on the recorder's path). */
  cachedIdOf(key: ObjectKey): number | undefined {
    return this.ids.get(objectKeyText(key));
  }

  /** The object's id if it was ever stored (a read: no object is made). */
  async knownIdOf(key: ObjectKey): Promise<number | undefined> {
    const known = this.ids.get(objectKeyText(key));
    if (known !== undefined) return known;
    return (
      await this.sql().get<{ id: number }>("SELECT id FROM objects WHERE cluster = ? AND grp = ? AND kind = ? AND namespace = ? AND name = ?", [
        key.cluster,
        key.group,
        key.kind,
        key.namespace,
        key.name,
      ])
    )?.id;
  }

  async idOf(key: ObjectKey): Promise<number> {
    const text = objectKeyText(key);
    const known = this.ids.get(text);
    if (known !== undefined) return known;
    const values = [key.cluster, key.group, key.kind, key.namespace, key.name];
    const sql = this.sql();
    const find = () => sql.get<{ id: number }>("SELECT id FROM objects WHERE cluster = ? AND grp = ? AND kind = ? AND namespace = ? AND name = ?", values);
    // Another replica may make the same object at once: the insert then does nothing, and the second read finds its row.
    const id =
      (await find())?.id ??
      (
        await sql.get<{ id: number }>(
          "INSERT INTO objects (cluster, grp, kind, namespace, name) VALUES (?, ?, ?, ?, ?) ON CONFLICT DO NOTHING RETURNING id",
          values,
        )
      )?.id ??
      (await find())!.id;
    if (this.ids.size > 200_000) this.ids.clear();
    this.ids.set(text, id);
    // An object made in a transaction that rolls back was never made.
    this.onRollback(() => this.ids.delete(text));
    return id;
  }

  /** PostgreSQL's day partitions this process has seen made (engine/partitions.ts). */
  private readonly partitions = new Set<string>();

  /** Makes the day partitions rows at these times go into, before they are stored (PostgreSQL; nothing on SQLite). */
  async ensureDays(tables: readonly PartitionedTable[], ...timesMs: number[]): Promise<void> {
    if (!this.engine.partitioned) return;
    const days = [...new Set(timesMs.map(partitionDayOf))];
    const known = this.partitions;
    // Asked for every write: almost always of days made already.
    if (days.every((day) => tables.every((table) => known.has(partitionName(table, day))))) return;
    const before = new Set(known);
    for (const table of tables) await ensurePartitions(this.sql(), table, days, known);
    if (known.size !== before.size) this.onRollback(() => known.forEach((name) => before.has(name) || known.delete(name)));
  }

  /** Forgets the partitions known (retention dropped some). */
  forgetPartitions(): void {
    this.partitions.clear();
  }

  sizeBytes(): Promise<number> {
    return this.engine.sizeBytes();
  }

  async getMeta(key: string): Promise<string | undefined> {
    return (await this.sql().get<{ value: string }>("SELECT value FROM meta WHERE key = ?", [key]))?.value;
  }

  /** Inside a transaction on PostgreSQL, stored with its next statement (a burst's resume point and time together). */
  setMeta(key: string, value: string): Promise<void> {
    return this.insertRow("INSERT INTO meta (key, value)", [key, value], " ON CONFLICT (key) DO UPDATE SET value = excluded.value", key);
  }

  /** Objects' keys by id (ids come from the store, never from a request: they are written into the statement). */
  async keysOf(ids: readonly number[]): Promise<Map<number, ObjectKey>> {
    const keys = new Map<number, ObjectKey>();
    for (let at = 0; at < ids.length; at += 5_000)
      for (const r of await this.sql().all<ObjectKey & { id: number }>(
        `SELECT id, cluster, grp AS "group", kind, namespace, name FROM objects WHERE id IN (${ids
          .slice(at, at + 5_000)
          .map(Number)
          .join(",")})`,
      )) {
        const { id, ...key } = r;
        keys.set(Number(id), key);
      }
    return keys;
  }
}
