/**
 * Audit bucket sources in the store: each object read (by key and ETag, so a restart resumes without reading one
 * twice, and an object rewritten under the same key is read again) and each source's last poll, which the
 * Clients view and /metrics show.
 */
import type { StoreConnection } from "./types";

export type BucketOutcome = "read" | "problems" | "skipped";

export interface BucketObjectRecord {
  key: string;
  etag: string;
  size: number;
  modifiedMs: number;
  readMs: number;
  outcome: BucketOutcome;
  /** what was stored (the ingest summary), the first problem, or why it was skipped */
  detail: string;
  /** requests stored from it */
  requests: number;
}

export interface BucketSourceRecord {
  source: string;
  polls: number;
  lastPollMs: number | null;
  lastSuccessMs: number | null;
  /** objects the last complete listing held */
  listed: number;
  error: string | null;
  errorMs: number | null;
  listAfter: string | null;
}

export interface BucketTotals {
  objects: number;
  bytes: number;
  requests: number;
  byOutcome: Record<BucketOutcome, number>;
}

interface ObjectRow {
  key: string;
  etag: string;
  size: number;
  modified_ms: number;
  read_ms: number;
  outcome: BucketOutcome;
  detail: string;
  requests: number;
}

export class BucketCheckpoints {
  constructor(private readonly connection: StoreConnection) {}

  private statement(sql: string) {
    return this.connection.statement(sql);
  }

  /** The ETag each object done from `fromKey` on was done at (one read per poll, not one per listed key). */
  doneEtags(source: string, fromKey: string | undefined): Map<string, string> {
    if (fromKey === undefined) return new Map();
    const rows = this.statement("SELECT object_key, etag FROM audit_bucket_objects WHERE source = ? AND object_key >= ?").all(source, fromKey) as {
      object_key: string;
      etag: string;
    }[];
    return new Map(rows.map((r) => [r.object_key, r.etag]));
  }

  recordObject(source: string, o: BucketObjectRecord): void {
    this.statement(
      `INSERT INTO audit_bucket_objects (source, object_key, etag, size, modified_ms, read_ms, outcome, detail, requests) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (source, object_key) DO UPDATE SET etag = excluded.etag, size = excluded.size, modified_ms = excluded.modified_ms,
         read_ms = excluded.read_ms, outcome = excluded.outcome, detail = excluded.detail, requests = excluded.requests`,
    ).run(source, o.key, o.etag, o.size, o.modifiedMs, o.readMs, o.outcome, o.detail, o.requests);
  }

  /**
   * A poll ended: with what it listed (0 when the listing failed) and, when something failed, what. The checkpoint
   * moves on only where the listing said so; a poll without errors is the source's last success.
   */
  recordPoll(source: string, nowMs: number, poll: { listed: number; listAfter: string | null; error: string | null }): void {
    this.statement(
      `INSERT INTO audit_bucket_sources (source, polls, last_poll_ms, last_success_ms, listed, error, error_ms, list_after)
         VALUES (@source, 1, @now, CASE WHEN @error IS NULL THEN @now END, @listed, @error, CASE WHEN @error IS NULL THEN NULL ELSE @now END, @listAfter)
       ON CONFLICT (source) DO UPDATE SET polls = polls + 1, last_poll_ms = @now,
         last_success_ms = CASE WHEN @error IS NULL THEN @now ELSE last_success_ms END,
         error = @error, error_ms = CASE WHEN @error IS NULL THEN error_ms ELSE @now END,
         listed = CASE WHEN @listed > 0 OR @error IS NULL THEN @listed ELSE listed END,
         list_after = COALESCE(@listAfter, list_after)`,
    ).run({ now: nowMs, error: poll.error, listed: poll.listed, listAfter: poll.listAfter, source });
  }

  source(source: string): BucketSourceRecord | null {
    const row = this.statement(
      "SELECT source, polls, last_poll_ms, last_success_ms, listed, error, error_ms, list_after FROM audit_bucket_sources WHERE source = ?",
    ).get(source) as
      | {
          source: string;
          polls: number;
          last_poll_ms: number | null;
          last_success_ms: number | null;
          listed: number;
          error: string | null;
          error_ms: number | null;
          list_after: string | null;
        }
      | undefined;
    if (!row) return null;
    return {
      source: row.source,
      polls: row.polls,
      lastPollMs: row.last_poll_ms,
      lastSuccessMs: row.last_success_ms,
      listed: row.listed,
      error: row.error,
      errorMs: row.error_ms,
      listAfter: row.list_after,
    };
  }

  totals(source: string): BucketTotals {
    const rows = this.statement(
      "SELECT outcome, COUNT(*) AS objects, SUM(size) AS bytes, SUM(requests) AS requests FROM audit_bucket_objects WHERE source = ? GROUP BY outcome",
    ).all(source) as { outcome: BucketOutcome; objects: number; bytes: number; requests: number }[];
    const totals: BucketTotals = { objects: 0, bytes: 0, requests: 0, byOutcome: { read: 0, problems: 0, skipped: 0 } };
    for (const row of rows) {
      totals.objects += row.objects;
      totals.bytes += row.bytes;
      totals.requests += row.requests;
      totals.byOutcome[row.outcome] = row.objects;
    }
    return totals;
  }

  /** The objects read last, newest first; `troubled`: only those read with problems or skipped. */
  recent(source: string, limit: number, troubled = false): BucketObjectRecord[] {
    const rows = this.statement(
      `SELECT object_key AS key, etag, size, modified_ms, read_ms, outcome, detail, requests FROM audit_bucket_objects
       WHERE source = ? ${troubled ? "AND outcome <> 'read'" : ""} ORDER BY read_ms DESC, object_key DESC LIMIT ?`,
    ).all(source, limit) as ObjectRow[];
    return rows.map((r) => ({
      key: r.key,
      etag: r.etag,
      size: r.size,
      modifiedMs: r.modified_ms,
      readMs: r.read_ms,
      outcome: r.outcome,
      detail: r.detail,
      requests: r.requests,
    }));
  }

  /** Forgets objects last modified before `beforeMs` (retention): a listing skips them without reading. */
  prune(beforeMs: number): number {
    return this.statement("DELETE FROM audit_bucket_objects WHERE modified_ms < ?").run(beforeMs).changes;
  }
}
