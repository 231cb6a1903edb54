/**
 * The audit side of the store: every completed write request (any resource, any outcome) for the
 * Clients view, and the last version of each object the audit log showed, for no-op detection
 * across files and webhook batches. Object writes themselves go to the write store's `writes`.
 */
import type { AuditRow } from "../snapshot/format/audit-rows";
import type { RequestRecord, StoreConnection } from "./types";
import type { ObjectKey } from "../wire/objects";

export class AuditStore {
  /** Its tables are in the write store's schema; its statements in the write store's cache. */
  constructor(readonly writes: StoreConnection) {}

  private statement(sql: string) {
    return this.writes.statement(sql);
  }

  /** Stores a request; false when the same auditID and stage is already stored (a re-read file, a retried batch). */
  addRequest(cluster: string, r: RequestRecord, noop: boolean | null): boolean {
    return (
      this.statement(
        `INSERT INTO audit_requests (request_key, ts_ms, cluster, usr, user_agent, verb, grp, resource, subresource, namespace, name, code, latency_ms, noop)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (request_key) DO NOTHING`,
      ).run(
        r.key,
        r.tsMs,
        cluster,
        r.user,
        r.userAgent,
        r.verb,
        r.group,
        r.resource,
        r.subresource,
        r.namespace,
        r.name,
        r.code,
        r.latencyMs,
        noop === null ? null : noop ? 1 : 0,
      ).changes > 0
    );
  }

  /** A stored request's write classified again: whether it changed nothing. */
  setNoop(requestKey: string, noop: boolean | null): void {
    this.statement("UPDATE audit_requests SET noop = ? WHERE request_key = ?").run(noop === null ? null : noop ? 1 : 0, requestKey);
  }

  /**
   * The newest version of an object the audit logs showed, when it was written and by which request
   * (null: not known, in a store from before they were kept).
   */
  latest(key: ObjectKey): { resourceVersion: string; body: string; tsMs: number | null; requestKey: string | null } | undefined {
    const row = this.statement("SELECT rv, body, ts_ms, request_key FROM audit_latest WHERE object_id = ?").get(this.writes.idOf(key)) as
      { rv: string; body: string; ts_ms: number | null; request_key: string | null } | undefined;
    return row ? { resourceVersion: row.rv, body: row.body, tsMs: row.ts_ms, requestKey: row.request_key } : undefined;
  }

  /** Keeps a version as the newest unless a newer one is stored (an older log read after a newer one). */
  setLatest(key: ObjectKey, resourceVersion: string, body: string, tsMs: number, requestKey: string): void {
    this.statement(
      `INSERT INTO audit_latest (object_id, rv, body, ts_ms, request_key) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (object_id) DO UPDATE SET rv = excluded.rv, body = excluded.body, ts_ms = excluded.ts_ms, request_key = excluded.request_key
       WHERE audit_latest.ts_ms IS NULL OR audit_latest.ts_ms <= excluded.ts_ms`,
    ).run(this.writes.idOf(key), resourceVersion, body, tsMs, requestKey);
  }

  /** Whether the watch recorder has recorded anything into this store (its last versions live in `latest`). */
  hasWatchedObjects(): boolean {
    return this.statement("SELECT 1 FROM latest LIMIT 1").get() !== undefined;
  }

  /** The requests in (fromMs, toMs], oldest first; null when there are more than `maxRequests`. */
  requestsBetween(fromMs: number, toMs: number, maxRequests: number): AuditRow[] | null {
    const rows = this.statement(
      `SELECT ts_ms AS tsMs, cluster, usr AS user, user_agent AS userAgent, verb, grp AS "group", resource, subresource, namespace, name, code, noop
       FROM audit_requests WHERE ts_ms > ? AND ts_ms <= ? ORDER BY ts_ms, id LIMIT ?`,
    ).all(fromMs, toMs, maxRequests + 1) as (Omit<AuditRow, "noop"> & { noop: number | null })[];
    if (rows.length > maxRequests) return null;
    return rows.map((r) => ({ ...r, noop: r.noop === null ? null : r.noop === 1 }));
  }

  /** Whether any audit request is stored (the Clients view says how to get some when none is). */
  hasRequests(): boolean {
    return this.statement("SELECT 1 FROM audit_requests LIMIT 1").get() !== undefined;
  }
}
