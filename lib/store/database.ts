/**
 * The store's database: one SQLite file (better-sqlite3, WAL), its schema and its versioned migrations
 * (migrator.ts), prepared statements, object ids, transactions and meta values. The repositories (writes,
 * ranking, audit) run their SQL through it; another engine would replace this part and that SQL.
 */
import Database from "better-sqlite3";
import { objectKeyText } from "../objects/key";
import type { ObjectKey } from "../wire/objects";
import { addMissingColumns, migrate, type Migration } from "./migrator";
import { MOVES } from "./moves";
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
];

/** The object store's schema version this Churnscope migrates files to. */
export const STORE_SCHEMA_VERSION = STORE_MIGRATIONS.at(-1)!.version;

export class StoreDatabase implements StoreConnection {
  readonly db: Database.Database;
  private readonly objectId: Database.Statement;
  private readonly insertObject: Database.Statement;

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.db.pragma("wal_autocheckpoint = 16384");
    migrate(this.db, "the object store", STORE_MIGRATIONS);
    this.objectId = this.db.prepare("SELECT id FROM objects WHERE cluster = ? AND grp = ? AND kind = ? AND namespace = ? AND name = ?");
    this.insertObject = this.db.prepare("INSERT INTO objects (cluster, grp, kind, namespace, name) VALUES (?, ?, ?, ?, ?)");
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

  /** The object's id if it was ever stored (a read: no object is made). */
  knownIdOf(key: ObjectKey): number | undefined {
    return (this.objectId.get(key.cluster, key.group, key.kind, key.namespace, key.name) as { id: number } | undefined)?.id;
  }

  idOf(key: ObjectKey): number {
    const text = objectKeyText(key);
    const known = this.ids.get(text);
    if (known !== undefined) return known;
    const row = this.objectId.get(key.cluster, key.group, key.kind, key.namespace, key.name) as { id: number } | undefined;
    const id = row ? row.id : Number(this.insertObject.run(key.cluster, key.group, key.kind, key.namespace, key.name).lastInsertRowid);
    if (this.ids.size > 200_000) this.ids.clear();
    this.ids.set(text, id);
    return id;
  }

  /**
   * Runs `work` in one transaction (thousands of inserts per second instead of dozens). It takes the
   * write lock first (IMMEDIATE): a transaction that read before another process (the dashboard
   * rolling up, the recorder) wrote cannot write any more, and fails at once instead of waiting.
   */
  transaction<T>(work: () => T): T {
    return this.db.transaction(work).immediate();
  }

  sizeBytes(): number {
    const pages = this.db.pragma("page_count", { simple: true }) as number;
    const size = this.db.pragma("page_size", { simple: true }) as number;
    return pages * size;
  }

  getMeta(key: string): string | undefined {
    return (this.statement("SELECT value FROM meta WHERE key = ?").get(key) as { value: string } | undefined)?.value;
  }

  setMeta(key: string, value: string): void {
    this.statement("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value").run(key, value);
  }
}
