/**
 * The audit webhook's spool: each accepted batch is written to its own file in `<dataDir>/audit-spool/` and synced
 * before the API server is answered, so answering takes a write, not a classification, and a batch answered is
 * never lost (a crash leaves it for the next start). A thread drains the files oldest first (spool-drain.ts). The
 * spool is bounded in bytes: a batch past the bound is refused with 429 and Retry-After, which the API server's
 * webhook backend retries, so nothing is dropped silently and nothing already accepted waits behind it.
 */
import { mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { open, rename, rm } from "node:fs/promises";
import { join } from "node:path";
import { ApiFailure } from "../api/envelope";

const SUFFIX = ".batch";

export class SpoolFullError extends ApiFailure {
  readonly retryAfterSeconds = 1;

  /** what the spool holds, in files or in its table: a batch past audit.maxSpoolMiB waits for the drain */
  constructor(held: { batches: number; bytes: number }) {
    super(429, "spool_full", `the audit spool holds ${held.batches} batches (${Math.round(held.bytes / 1_048_576)} MiB, audit.maxSpoolMiB): try again shortly`);
  }
}

/** A spooled batch's file name: its order (zero-padded, so names sort in order) and its cluster (a DNS-style name). */
export const spoolName = (seq: number, cluster: string) => `${String(seq).padStart(15, "0")}.${cluster}${SUFFIX}`;

export function parseSpoolName(name: string): { seq: number; cluster: string } | null {
  const m = /^(\d{15})\.([a-z0-9.-]+)\.batch$/.exec(name);
  return m ? { seq: Number(m[1]), cluster: m[2] } : null;
}

/** The spooled batches in `dir`, oldest first. */
export function spooledBatches(dir: string): string[] {
  try {
    return readdirSync(dir)
      .filter((name) => parseSpoolName(name) !== null)
      .sort();
  } catch {
    return [];
  }
}

export class AuditSpool {
  private bytes = 0;
  private batches = 0;
  private seq = 0;

  constructor(
    readonly dir: string,
    readonly maxBytes: number,
  ) {
    mkdirSync(dir, { recursive: true });
    // What a stop left: still to drain, and counted against the bound. A half-written file never got its name.
    for (const name of readdirSync(dir)) if (name.endsWith(".tmp")) rmSync(join(dir, name), { force: true });
    for (const name of spooledBatches(dir)) {
      this.bytes += statSync(join(dir, name)).size;
      this.batches++;
      this.seq = Math.max(this.seq, parseSpoolName(name)!.seq);
    }
  }

  get queued(): { batches: number; bytes: number } {
    return { batches: this.batches, bytes: this.bytes };
  }

  /**
   * Writes a batch durably (off the event loop: batches arriving together are written side by side); refused
   * with 429 when the spool would pass its bound (an empty spool takes any batch). Its number is taken at once, in
   * the order batches arrived; the drain takes a batch once it is synced and named, so two written side by side may
   * be taken in either order, which the ingester allows for (the API server posts its batches concurrently anyway).
   */
  async accept(cluster: string, body: Buffer): Promise<{ batches: number; bytes: number }> {
    if (this.batches > 0 && this.bytes + body.length > this.maxBytes) throw new SpoolFullError(this.queued);
    const name = spoolName(++this.seq, cluster);
    const temp = join(this.dir, `${name}.tmp`);
    // Counted from here, so batches written side by side cannot pass the bound together.
    this.bytes += body.length;
    this.batches++;
    try {
      const file = await open(temp, "w");
      try {
        await file.writeFile(body);
        await file.sync();
      } finally {
        await file.close();
      }
      await rename(temp, join(this.dir, name));
      // The rename is durable once the directory is synced.
      await this.syncDir();
    } catch (error) {
      this.drained(body.length);
      await rm(temp, { force: true });
      throw error;
    }
    return this.queued;
  }

  private dirSyncing: Promise<void> | null = null;
  private nextDirSync: Promise<void> | null = null;

  /**
   * Syncs the directory for every rename before the call. Batches arriving together (an API server retrying its
   * backlog after a restart) share syncs: one in flight may have begun before this rename, so the next one, shared
   * by all that arrive meanwhile, covers it.
   */
  private syncDir(): Promise<void> {
    if (!this.dirSyncing) return (this.dirSyncing = syncDirectory(this.dir).finally(() => (this.dirSyncing = null)));
    return (this.nextDirSync ??= this.dirSyncing
      .catch(() => undefined)
      .then(() => {
        this.nextDirSync = null;
        return this.syncDir();
      }));
  }

  /** The drain thread took a batch of `bytes` off the spool. */
  drained(bytes: number): void {
    this.bytes = Math.max(0, this.bytes - bytes);
    this.batches = Math.max(0, this.batches - 1);
  }
}

async function syncDirectory(path: string): Promise<void> {
  const dir = await open(path, "r");
  try {
    await dir.sync();
  } finally {
    await dir.close();
  }
}
