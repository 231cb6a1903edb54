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

  private sql() {
    return this.connection.sql();
  }

  /** The ETag each object done from `fromKey` on was done at (one read per poll, not one per listed key). */
  async doneEtags(source: string, fromKey: string | undefined): Promise<Map<string, string>> {
    if (fromKey === undefined) return new Map();
    const rows = await this.sql().all<{ object_key: string; etag: string }>(
      "SELECT object_key, etag FROM audit_bucket_objects WHERE source = ? AND object_key >= ?",
      [source, fromKey],
    );
    return new Map(rows.map((r) => [r.object_key, r.etag]));
  }

  async recordObject(source: string, o: BucketObjectRecord): Promise<void> {
    await this.sql().run(
      `INSERT INTO audit_bucket_objects (source, object_key, etag, size, modified_ms, read_ms, outcome, detail, requests) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (source, object_key) DO UPDATE SET etag = excluded.etag, size = excluded.size, modified_ms = excluded.modified_ms,
         read_ms = excluded.read_ms, outcome = excluded.outcome, detail = excluded.detail, requests = excluded.requests`,
      [source, o.key, o.etag, o.size, o.modifiedMs, o.readMs, o.outcome, o.detail, o.requests],
    );
  }

  /**
   * A poll ended: with what it listed (0 when the listing failed) and, when something failed, what. The checkpoint
   * moves on only where the listing said so; a poll without errors is the source's last success.
   */
  async recordPoll(source: string, nowMs: number, poll: { listed: number; listAfter: string | null; error: string | null }): Promise<void> {
    const ok = poll.error === null;
    await this.sql().run(
      `INSERT INTO audit_bucket_sources AS s (source, polls, last_poll_ms, last_success_ms, listed, error, error_ms, list_after)
         VALUES (?, 1, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (source) DO UPDATE SET polls = s.polls + 1, last_poll_ms = excluded.last_poll_ms,
         last_success_ms = COALESCE(excluded.last_success_ms, s.last_success_ms),
         error = excluded.error, error_ms = COALESCE(excluded.error_ms, s.error_ms),
         listed = CASE WHEN ? THEN excluded.listed ELSE s.listed END,
         list_after = COALESCE(excluded.list_after, s.list_after)`,
      [source, nowMs, ok ? nowMs : null, poll.listed, poll.error, ok ? null : nowMs, poll.listAfter, poll.listed > 0 || ok ? 1 : 0],
    );
  }

  async source(source: string): Promise<BucketSourceRecord | null> {
    const row = (await this.sql().get(
      "SELECT source, polls, last_poll_ms, last_success_ms, listed, error, error_ms, list_after FROM audit_bucket_sources WHERE source = ?",
      [source],
    )) as
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

  async totals(source: string): Promise<BucketTotals> {
    const rows = await this.sql().all<{ outcome: BucketOutcome; objects: number; bytes: number; requests: number }>(
      "SELECT outcome, COUNT(*) AS objects, SUM(size) AS bytes, SUM(requests) AS requests FROM audit_bucket_objects WHERE source = ? GROUP BY outcome",
      [source],
    );
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
  async recent(source: string, limit: number, troubled = false): Promise<BucketObjectRecord[]> {
    const rows = await this.sql().all<ObjectRow>(
      `SELECT object_key AS key, etag, size, modified_ms, read_ms, outcome, detail, requests FROM audit_bucket_objects
       WHERE source = ? ${troubled ? "AND outcome <> 'read'" : ""} ORDER BY read_ms DESC, object_key DESC LIMIT ?`,
      [source, limit],
    );
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
  async prune(beforeMs: number): Promise<number> {
    return (await this.sql().run("DELETE FROM audit_bucket_objects WHERE modified_ms < ?", [beforeMs])).changes;
  }
}
