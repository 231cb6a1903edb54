/**
 * Which process records each cluster: a lease row per cluster in the store's database, which every replica (and
 * `npm run recorder` beside the dashboard) claims, renews and checks, so exactly one records a cluster at a time.
 * Churnscope stays list/watch-only on the cluster: the choice is made here, not with a Kubernetes Lease. Times are the
 * processes' own clocks (replicas run on nodes that keep time); a lease lasts `ttlMs` past its last renewal.
 */
import type { StoreConnection } from "./types";

/** One row per recorded cluster: which process records it, until when. The same on both engines. */
export const RECORDER_LEASES =
  "CREATE TABLE IF NOT EXISTS recorder_leases (cluster TEXT PRIMARY KEY, holder TEXT NOT NULL, expires_ms BIGINT NOT NULL, acquired_ms BIGINT NOT NULL)";

/** Thrown inside a recorder's transaction when its process no longer holds the cluster's lease: nothing of it is stored. */
export class LeaseLost extends Error {}

export interface LeaseHolder {
  cluster: string;
  holder: string;
  expiresMs: number;
  acquiredMs: number;
}

export class RecorderLeases {
  constructor(private readonly connection: StoreConnection) {}

  private sql() {
    return this.connection.sql();
  }

  /**
   * Takes the cluster's lease for `holder` when it is free or expired, or renews it when `holder` has it, until
   * `nowMs + ttlMs`. Answers whether `holder` holds it now, and whether it was someone else's (or nobody's) before.
   */
  async claim(cluster: string, holder: string, nowMs: number, ttlMs: number): Promise<{ held: boolean; taken: boolean }> {
    const row = await this.sql().get<{ holder: string; acquired_ms: number }>(
      `INSERT INTO recorder_leases AS l (cluster, holder, expires_ms, acquired_ms) VALUES (?, ?, ?, ?)
       ON CONFLICT (cluster) DO UPDATE SET holder = excluded.holder, expires_ms = excluded.expires_ms,
         acquired_ms = CASE WHEN l.holder = excluded.holder THEN l.acquired_ms ELSE excluded.acquired_ms END
       WHERE l.holder = excluded.holder OR l.expires_ms < ?
       RETURNING holder, acquired_ms`,
      [cluster, holder, nowMs + ttlMs, nowMs, nowMs],
    );
    return { held: row?.holder === holder, taken: row?.holder === holder && row.acquired_ms === nowMs };
  }

  /**
   * Inside a recorder's transaction: throws LeaseLost unless `holder` holds the cluster's lease. On PostgreSQL the row
   * is locked until the transaction ends, so a replica taking the lease over waits for this batch to commit, and the
   * old holder's next batch is refused.
   */
  async check(cluster: string, holder: string, nowMs: number): Promise<void> {
    const row = await this.sql().get<{ holder: string; expires_ms: number }>(
      `SELECT holder, expires_ms FROM recorder_leases WHERE cluster = ?${this.connection.engine.forShare}`,
      [cluster],
    );
    if (!row || row.holder !== holder || row.expires_ms < nowMs)
      throw new LeaseLost(`${cluster} is recorded by ${row && row.expires_ms >= nowMs ? row.holder : "nobody"} now, not by this process`);
  }

  /** Gives the lease up (a clean stop), so another process takes over at once. */
  async release(cluster: string, holder: string): Promise<void> {
    await this.sql().run("DELETE FROM recorder_leases WHERE cluster = ? AND holder = ?", [cluster, holder]);
  }

  /** Every cluster's lease, for the status pages and metrics. */
  async holders(): Promise<LeaseHolder[]> {
    return this.sql().all<LeaseHolder>(`SELECT cluster, holder, expires_ms AS "expiresMs", acquired_ms AS "acquiredMs" FROM recorder_leases ORDER BY cluster`);
  }
}
