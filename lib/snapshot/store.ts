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
import { decodeBundle, tooLarge } from "./codec";
import type { Snapshot, SnapshotInfo } from "./schema";
import type { UploadOutcome } from "./upload-worker";

export const REPLAY_ID = "replay";
export const REPLAY_BUNDLE_PATH = join("lib", "demo", "replay.snapshot.json.gz");
const ID = /^(replay|[0-9a-f]{16})$/;
/**
 * Unpacked JSON kept parsed in memory, all snapshots together (the newest is always kept). Parsed, a
 * bundle takes about six times its JSON: the replay's 46 MB hold about 260 MB of the 2 GiB the
 * Kubernetes base allows the pod.
 */
const CACHE_BYTES = 64 << 20;
/** The heap an upload's check may use (limits.maxSnapshotCheckMiB): the replay's needs between 256 and 384 MiB. */
const CHECK_HEAP_MIB = 1024;

export interface SnapshotStoreOptions {
  /** past this heap, the upload's check stops and the upload is refused (413) rather than the process running out of memory */
  checkHeapMiB?: number;
  replayPath?: string;
  cacheBytes?: number;
}

export class SnapshotStore {
  /** Oldest first. */
  private readonly cache = new Map<string, { snapshot: Snapshot; unpackedBytes: number }>();

  private readonly replayPath: string;
  private readonly cacheBytes: number;
  private readonly checkHeapMiB: number;

  constructor(
    private readonly dir: string,
    readonly maxBytes: number,
    options: SnapshotStoreOptions = {},
  ) {
    this.replayPath = options.replayPath ?? REPLAY_BUNDLE_PATH;
    this.cacheBytes = options.cacheBytes ?? CACHE_BYTES;
    this.checkHeapMiB = options.checkHeapMiB ?? CHECK_HEAP_MIB;
  }

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
    if (hit) return hit.snapshot;
    const decoded = decodeBundle(this.read(id), this.maxBytesOf(id));
    this.cache.set(id, decoded);
    let held = [...this.cache.values()].reduce((sum, entry) => sum + entry.unpackedBytes, 0);
    for (const [oldId, entry] of this.cache) {
      if (held <= this.cacheBytes || oldId === id) break;
      this.cache.delete(oldId);
      held -= entry.unpackedBytes;
    }
    return decoded.snapshot;
  }

  /**
   * Validates an uploaded bundle and stores it re-encoded (in a thread: see upload-worker.ts); answers its id and
   * what it holds. It is parsed here only when first viewed: a copy sent back from the thread would double the memory
   * an upload takes at its peak.
   */
  async put(bytes: Buffer): Promise<SnapshotInfo> {
    const { id, encoded, held } = await checkInThread(bytes, this.maxBytes, this.checkHeapMiB);
    mkdirSync(this.dir, { recursive: true });
    const path = this.pathOf(id);
    if (!existsSync(path)) {
      const temporary = `${path}.${process.pid}.tmp`;
      writeFileSync(temporary, Buffer.from(encoded));
      renameSync(temporary, path);
    }
    return held;
  }
}

/** How long a check may run: generous for a bundle of ordinary shape (the replay's 2.7 MB take about 3 s). */
const checkDeadlineMs = (packedBytes: number) => 10_000 + (4_000 * packedBytes) / 1_048_576;

async function checkInThread(bytes: Buffer, maxBytes: number, heapMiB: number): Promise<{ id: string; encoded: Uint8Array; held: SnapshotInfo }> {
  // Bounded in memory and time, because what a bundle costs to parse depends on its shape more than its size:
  // 60 KB packed of empty arrays unpack to 60 MiB that take 1.6 GB and 11 s to parse. Past a bound the thread
  // stops, not the process.
  const checker = new Worker(new URL("./upload-worker.ts", import.meta.url), { workerData: { bytes, maxBytes }, resourceLimits: { maxOldGenerationSizeMb: heapMiB } });
  const deadlineMs = checkDeadlineMs(bytes.length);
  let late = false;
  const timer = setTimeout(() => {
    late = true;
    void checker.terminate();
  }, deadlineMs);
  const outcome = await threadOutcome<UploadOutcome>(checker, "checking the upload")
    .catch((error: unknown) => {
      const shape = "it holds more, or smaller, pieces than a snapshot of its size should";
      if (late) throw tooLarge(`checking this snapshot took longer than ${Math.round(deadlineMs / 1000)} s: ${shape}`);
      if ((error as { code?: unknown }).code === "ERR_WORKER_OUT_OF_MEMORY") throw tooLarge(`checking this snapshot needs more than ${heapMiB} MiB of memory (limits.maxSnapshotCheckMiB): ${shape}`);
      throw error;
    })
    .finally(() => clearTimeout(timer));
  if ("ok" in outcome) return outcome.ok;
  if ("failure" in outcome) throw new ApiFailure(outcome.failure.httpStatus, outcome.failure.errorType, outcome.failure.message);
  throw new Error(`checking the upload: ${outcome.error}`);
}
