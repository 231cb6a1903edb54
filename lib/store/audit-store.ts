/**
 * The audit side of the store: every completed write request (any resource, any outcome) for the
 * Clients view, and the last version of each object the audit log showed, for no-op detection
 * across files and webhook batches. Object writes themselves go to the write store's `writes`.
 */
import type { NoopEvidence, PreconditionWrite } from "../churn/preconditions";
import type { AuditRow } from "../snapshot/format/audit-rows";
import type { RequestRecord, StoreConnection } from "./types";
import type { ObjectKey } from "../wire/objects";
import { insertRows } from "./engine/insert-rows";

/** The object a request wrote, as audit requests name it (any subresource: they share its versions). */
export interface ObjectTarget {
  cluster: string;
  group: string;
  resource: string;
  namespace: string;
  name: string;
}

const INSERT_REQUEST = `INSERT INTO audit_requests (request_key, ts_ms, cluster, usr, user_agent, verb, grp, resource, subresource, namespace, name, code,
  latency_ms, noop, evidence, precondition, order_us)`;

/** A stored request's write, classified again: whether it changed nothing, and on what evidence. */
export interface NoopVerdict {
  requestKey: string;
  noop: boolean | null;
  evidence: NoopEvidence | null;
}

export class AuditStore {
  /** Its tables are in the write store's schema; its statements in the write store's cache. */
  constructor(readonly writes: StoreConnection) {}

  private sql() {
    return this.writes.sql();
  }

  /**
   * Which of a batch's requests are stored already, asked once in its transaction: `addRequest` then answers from what
   * this learnt, and on PostgreSQL its row waits to go in with the others (a statement per request was most of a
   * webhook batch's time).
   */
  async learnStored(requests: readonly { key: string; tsMs: number }[]): Promise<void> {
    const known = this.transactionKnows();
    if (!known || requests.length === 0) return;
    // A request is the same by its key; PostgreSQL's unique key adds the time, as its partitions are by time.
    const asked = this.writes.engine.rowsTable(
      "r",
      [
        ["key", "text"],
        ["ts_ms", "bigint"],
      ],
      requests.map((r) => [r.key, r.tsMs]),
    );
    const rows = await this.sql().all<{ key: string }>(
      `SELECT a.request_key AS key FROM audit_requests a JOIN ${asked.sql} ON a.request_key = r.key AND a.ts_ms = r.ts_ms`,
      asked.params,
    );
    known.stored = new Set(rows.map((row) => row.key));
  }

  /** What the current transaction learnt of the requests stored (undefined outside one, or before `learnStored`). */
  private transactionKnows() {
    return this.writes.transactionValue(this, () => ({ stored: undefined as Set<string> | undefined }));
  }

  /** Stores a request; false when the same auditID and stage is already stored (a re-read file, a retried batch). */
  async addRequest(cluster: string, r: RequestRecord, noop: boolean | null, evidence: NoopEvidence | null = null): Promise<boolean> {
    await this.writes.ensureDays(["audit_requests"], r.tsMs);
    const row = [
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
      noop === null ? null : evidence,
      r.precondition ?? null,
      r.orderUs ?? r.tsMs * 1000,
    ];
    const stored = this.transactionKnows()?.stored;
    if (!stored) return (await insertRows(this.sql(), INSERT_REQUEST, [row], " ON CONFLICT DO NOTHING")) > 0;
    // Nothing else stores requests while this transaction runs (the storing lock, or SQLite's write lock): what it
    // learnt, and what it stored since, is all there is.
    if (stored.has(r.key)) return false;
    stored.add(r.key);
    await this.writes.insertRow(INSERT_REQUEST, row);
    return true;
  }

  /** A stored request's write classified again: whether it changed nothing, and on what evidence. */
  async setNoop(requestKey: string, noop: boolean | null, evidence: NoopEvidence | null): Promise<void> {
    await this.setNoops([{ requestKey, noop, evidence }]);
  }

  /** Many `setNoop`s in one statement, where each would be a round trip. */
  async setNoops(verdicts: readonly NoopVerdict[]): Promise<void> {
    const flags = verdicts.map(({ noop, evidence }) => ({ noop: noop === null ? null : noop ? 1 : 0, evidence: noop === null ? null : evidence }));
    if (verdicts.length === 1)
      await this.sql().run("UPDATE audit_requests SET noop = ?, evidence = ? WHERE request_key = ?", [
        flags[0].noop,
        flags[0].evidence,
        verdicts[0].requestKey,
      ]);
    else if (verdicts.length > 1) {
      const set = this.writes.engine.rowsTable(
        "v",
        [
          ["request_key", "text"],
          ["noop", "integer"],
          ["evidence", "text"],
        ],
        verdicts.map((v, i) => [v.requestKey, flags[i].noop, flags[i].evidence]),
      );
      await this.sql().run(
        `UPDATE audit_requests SET noop = v.noop, evidence = v.evidence FROM ${set.sql} WHERE audit_requests.request_key = v.request_key`,
        set.params,
      );
    }
  }

  /**
   * One object's successful writes completed in [fromUs, toUs], with the one before and the two after them,
   * oldest first: all the precondition rule needs to decide those writes and their neighbours. `lastIsNewest`:
   * the last one is the object's newest (else it is there only as the one after the one before it).
   */
  async writesAround(
    target: ObjectTarget,
    fromUs: number,
    toUs: number,
  ): Promise<{ writes: (PreconditionWrite & { requestKey: string; noop: boolean | null })[]; lastIsNewest: boolean }> {
    const object = "cluster = ? AND grp = ? AND resource = ? AND namespace = ? AND name = ? AND (code = 0 OR code BETWEEN 200 AND 299)";
    const columns = `request_key AS "requestKey", precondition, noop, evidence, order_us AS "orderUs", id`;
    const { cluster, group, resource, namespace, name } = target;
    const at = [cluster, group, resource, namespace, name];
    const rows = (await this.sql().all(
      `SELECT * FROM (SELECT ${columns}, 0 AS after FROM audit_requests WHERE ${object} AND order_us < ? ORDER BY order_us DESC, id DESC LIMIT 1) AS before
       UNION ALL SELECT ${columns}, 0 AS after FROM audit_requests WHERE ${object} AND order_us BETWEEN ? AND ?
       UNION ALL SELECT * FROM (SELECT ${columns}, 1 AS after FROM audit_requests WHERE ${object} AND order_us > ? ORDER BY order_us, id LIMIT 2) AS next
       ORDER BY "orderUs", id`,
      [...at, fromUs, ...at, fromUs, toUs, ...at, toUs],
    )) as {
      requestKey: string;
      precondition: string | null;
      noop: number | null;
      evidence: NoopEvidence | null;
      after?: number;
    }[];
    const writes = rows.map((r) => ({
      requestKey: r.requestKey,
      ...(r.precondition === null ? {} : { precondition: r.precondition }),
      noop: r.noop === null ? null : r.noop === 1,
      // A flag stored before its evidence was kept came from bodies or the API server's answer, never from this rule.
      evidence: r.evidence ?? (r.noop === null ? null : "body"),
    }));
    return { writes, lastIsNewest: rows.filter((r) => r.after === 1).length < 2 };
  }

  /**
   * The newest version of an object the audit logs showed, when it was written and by which request
   * (null: not known, in a store from before they were kept).
   */
  async latest(key: ObjectKey): Promise<{ resourceVersion: string; body: string; tsMs: number | null; requestKey: string | null } | undefined> {
    const id = await this.writes.knownIdOf(key);
    if (id === undefined) return undefined;
    const row = await this.sql().get<{ rv: string; body: string; ts_ms: number | null; request_key: string | null }>(
      "SELECT rv, body, ts_ms, request_key FROM audit_latest WHERE object_id = ?",
      [id],
    );
    return row ? { resourceVersion: row.rv, body: row.body, tsMs: row.ts_ms, requestKey: row.request_key } : undefined;
  }

  /** Keeps a version as the newest unless a newer one is stored (an older log read after a newer one). */
  async setLatest(key: ObjectKey, resourceVersion: string, body: string, tsMs: number, requestKey: string): Promise<void> {
    await this.sql().run(
      `INSERT INTO audit_latest (object_id, rv, body, ts_ms, request_key) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (object_id) DO UPDATE SET rv = excluded.rv, body = excluded.body, ts_ms = excluded.ts_ms, request_key = excluded.request_key
       WHERE audit_latest.ts_ms IS NULL OR audit_latest.ts_ms <= excluded.ts_ms`,
      [await this.writes.idOf(key), resourceVersion, body, tsMs, requestKey],
    );
  }

  /** Whether the watch recorder has recorded anything into this store (its last versions live in `latest`). */
  async hasWatchedObjects(): Promise<boolean> {
    return (await this.sql().get("SELECT 1 AS one FROM latest LIMIT 1")) !== undefined;
  }

  /** The requests in (fromMs, toMs], oldest first; null when there are more than `maxRequests`. */
  async requestsBetween(fromMs: number, toMs: number, maxRequests: number): Promise<AuditRow[] | null> {
    const rows = await this.sql().all<Omit<AuditRow, "noop"> & { noop: number | null }>(
      `SELECT ts_ms AS "tsMs", cluster, usr AS "user", user_agent AS "userAgent", verb, grp AS "group", resource, subresource, namespace, name, code, noop, evidence
       FROM audit_requests WHERE ts_ms > ? AND ts_ms <= ? ORDER BY ts_ms, id LIMIT ?`,
      [fromMs, toMs, maxRequests + 1],
    );
    if (rows.length > maxRequests) return null;
    return rows.map((r) => ({ ...r, noop: r.noop === null ? null : r.noop === 1 }));
  }

  /** Whether any audit request is stored, as an integer column (1 or 0): asked alone, or with other questions in one statement. */
  static readonly ANY_REQUEST_SQL = "CAST(EXISTS (SELECT 1 FROM audit_requests) AS INTEGER)";

  /** Whether any audit request is stored (the Clients view says how to get some when none is). */
  async hasRequests(): Promise<boolean> {
    return (await this.sql().get<{ audited: number }>(`SELECT ${AuditStore.ANY_REQUEST_SQL} AS audited`))!.audited === 1;
  }
}
