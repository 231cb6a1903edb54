/**
 * The audit side of the store: every completed write request (any resource, any outcome) for the
 * Clients view, and the last version of each object the audit log showed, for no-op detection
 * across files and webhook batches. Object writes themselves go to the write store's `writes`.
 */
import type { AuditRequest } from "../audit/event";
import type Database from "better-sqlite3";
import type { ObjectKey, WriteRequest, WriteStore } from "./store";

const SCHEMA = `
CREATE TABLE IF NOT EXISTS audit_requests (
  id INTEGER PRIMARY KEY, request_key TEXT NOT NULL UNIQUE, ts_ms INTEGER NOT NULL, cluster TEXT NOT NULL,
  usr TEXT NOT NULL, user_agent TEXT NOT NULL, verb TEXT NOT NULL, grp TEXT NOT NULL, resource TEXT NOT NULL,
  subresource TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, code INTEGER NOT NULL, latency_ms REAL,
  -- 1 changed nothing, 0 changed something, NULL not known (no bodies, or not a profiled kind)
  noop INTEGER
);
CREATE INDEX IF NOT EXISTS audit_requests_ts ON audit_requests (ts_ms, cluster);
CREATE TABLE IF NOT EXISTS audit_latest (object_id INTEGER PRIMARY KEY, rv TEXT NOT NULL, body TEXT NOT NULL);
`;

export class AuditStore {
  constructor(readonly writes: WriteStore) {
    writes.db.exec(SCHEMA);
  }

  private readonly statements = new Map<string, Database.Statement>();
  statement(sql: string): Database.Statement {
    let prepared = this.statements.get(sql);
    if (!prepared) {
      prepared = this.writes.db.prepare(sql);
      this.statements.set(sql, prepared);
    }
    return prepared;
  }

  /** Stores a request; false when the same auditID and stage is already stored (a re-read file, a retried batch). */
  addRequest(cluster: string, r: AuditRequest, noop: boolean | null): boolean {
    return (
      this.statement(
        `INSERT INTO audit_requests (request_key, ts_ms, cluster, usr, user_agent, verb, grp, resource, subresource, namespace, name, code, latency_ms, noop)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (request_key) DO NOTHING`,
      ).run(r.key, r.tsMs, cluster, r.user, r.userAgent, r.verb, r.group, r.resource, r.subresource, r.namespace, r.name, r.code, r.latencyMs, noop === null ? null : noop ? 1 : 0).changes > 0
    );
  }

  /** The last version of an object the audit log showed. */
  latest(key: ObjectKey): { resourceVersion: string; body: string } | undefined {
    const row = this.statement("SELECT rv, body FROM audit_latest WHERE object_id = ?").get(this.writes.idOf(key)) as { rv: string; body: string } | undefined;
    return row ? { resourceVersion: row.rv, body: row.body } : undefined;
  }

  setLatest(key: ObjectKey, resourceVersion: string, body: string): void {
    this.statement("INSERT INTO audit_latest (object_id, rv, body) VALUES (?, ?, ?) ON CONFLICT (object_id) DO UPDATE SET rv = excluded.rv, body = excluded.body").run(this.writes.idOf(key), resourceVersion, body);
  }

  /**
   * A write the watch recorder already stored (same object and resourceVersion, within a minute) is the
   * same write: the audit adds who sent it and how, instead of counting it twice.
   */
  enrichWatchedWrite(key: ObjectKey, resourceVersion: string, tsMs: number, user: string, request: WriteRequest): boolean {
    return (
      this.statement(
        `UPDATE writes SET verb = ?, subresource = ?, user_agent = ?, code = ?, latency_ms = ?, writer = CASE WHEN writer = 'unknown' THEN ? ELSE writer END
         WHERE object_id = ? AND ts_ms BETWEEN ? AND ? AND rv = ? AND source = 'watch'`,
      ).run(request.verb, request.subresource, request.userAgent, request.code, request.latencyMs, user, this.writes.idOf(key), tsMs - 60_000, tsMs + 60_000, resourceVersion).changes > 0
    );
  }

  /** Whether the watch recorder has recorded anything into this store (its last versions live in `latest`). */
  hasWatchedObjects(): boolean {
    return this.statement("SELECT 1 FROM latest LIMIT 1").get() !== undefined;
  }

  /** Whether any audit request is stored (the Clients view says how to get some when none is). */
  hasRequests(): boolean {
    return this.statement("SELECT 1 FROM audit_requests LIMIT 1").get() !== undefined;
  }
}
