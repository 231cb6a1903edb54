/**
 * Where snapshots live: the committed replay under a fixed id, and uploads under the data dir,
 * named by a hash of their content (so uploading the same file twice gives the same link).
 * Parsed bundles are kept in memory, a few at a time.
 */
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { ApiFailure, badRequest } from "../api/envelope";
import { threadOutcome } from "../server/thread-outcome";
import { decodeSnapshot } from "./codec";
import type { Snapshot } from "./schema";
import type { UploadOutcome } from "./upload-worker";

export const REPLAY_ID = "replay";
export const REPLAY_BUNDLE_PATH = join("lib", "demo", "replay.snapshot.json.gz");
const ID = /^(replay|[0-9a-f]{16})$/;
const CACHE_SIZE = 4;

export class SnapshotStore {
  private readonly cache = new Map<string, Snapshot>();

  constructor(
    private readonly dir: string,
    readonly maxBytes: number,
    private readonly replayPath = REPLAY_BUNDLE_PATH,
  ) {}

  private pathOf(id: string): string {
    return id === REPLAY_ID ? this.replayPath : join(this.dir, `${id}.json.gz`);
  }

  /** The stored bundle as it is on disk (what "Download snapshot" sends for an open snapshot). */
  read(id: string): Buffer {
    if (!ID.test(id)) throw badRequest(`parameter snapshot: "${id.slice(0, 40)}" is not a snapshot id`);
    const path = this.pathOf(id);
    if (!existsSync(path)) {
      throw new ApiFailure(404, "not_found", id === REPLAY_ID ? "the replay bundle is missing from this checkout: run npm run replay:build" : `no snapshot with id ${id}`);
    }
    return readFileSync(path);
  }

  /** The most a bundle may hold: the replay is ours and larger than an upload may be; uploads were checked on the way in. */
  maxBytesOf(id: string): number {
    return id === REPLAY_ID ? Math.max(this.maxBytes, 64 << 20) : this.maxBytes;
  }

  get(id: string): Snapshot {
    const hit = this.cache.get(id);
    if (hit) return hit;
    const bytes = this.read(id);
    const snapshot = decodeSnapshot(bytes, this.maxBytesOf(id));
    this.cache.set(id, snapshot);
    if (this.cache.size > CACHE_SIZE) this.cache.delete(this.cache.keys().next().value as string);
    return snapshot;
  }

  /** Validates an uploaded bundle and stores it re-encoded (in a thread: see upload-worker.ts); returns its id. */
  async put(bytes: Buffer): Promise<{ id: string; snapshot: Snapshot }> {
    const { id, encoded, snapshot } = await checkInThread(bytes, this.maxBytes);
    mkdirSync(this.dir, { recursive: true });
    const path = this.pathOf(id);
    if (!existsSync(path)) {
      const temporary = `${path}.${process.pid}.tmp`;
      writeFileSync(temporary, Buffer.from(encoded));
      renameSync(temporary, path);
    }
    this.cache.set(id, snapshot);
    return { id, snapshot };
  }
}

async function checkInThread(bytes: Buffer, maxBytes: number): Promise<{ id: string; encoded: Uint8Array; snapshot: Snapshot }> {
  const checker = new Worker(new URL("./upload-worker.ts", import.meta.url), { workerData: { bytes, maxBytes } });
  const outcome = await threadOutcome<UploadOutcome>(checker, "checking the upload");
  if ("ok" in outcome) return outcome.ok;
  if ("failure" in outcome) throw new ApiFailure(outcome.failure.httpStatus, outcome.failure.errorType, outcome.failure.message);
  throw new Error(`checking the upload: ${outcome.error}`);
}
