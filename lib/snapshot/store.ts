/**
 * Where snapshots live: the committed replay under a fixed id, and uploads in a bundle store (bundles.ts),
 * named by a hash of their content (so uploading the same file twice gives the same link).
 * Opened bundles are decoded in a thread and their held part kept in memory, a few at a time.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { ApiFailure, badRequest } from "../api/envelope";
import { BusyFailure, Gate } from "../api/gate";
import { joinInFlight } from "../runtime/in-flight";
import { DEADLINE_CODE, runTask } from "../runtime/threads";
import { openingReader, tooLarge } from "./format/codec";
import { opened, type HeldSnapshot, type OpenedSnapshot } from "./lookup";
import type { Snapshot, SnapshotInfo, SnapshotMarker } from "./format/schema";
import { checkedUpload, openedFrom, type CheckedUpload } from "./checked-upload";
import { prebuiltHeldPath, readPrebuiltHeld } from "./prebuilt-held";
import type { BundleStore, KeptBundle } from "./bundles";

export const REPLAY_ID = "replay";
export const REPLAY_BUNDLE_PATH = join("lib", "demo", "replay.snapshot.json.gz");
/** The most the replay's bundle may hold, however small the uploads' bound. */
export const REPLAY_MAX_BYTES = 64 << 20;
const ID = /^(replay|[0-9a-f]{16})$/;
/**
 * The held parts of open snapshots kept parsed in memory, counted as JSON, all snapshots together (the
 * newest is always kept). Parsed, JSON takes about six times its size; the replay's held part is 8.4 MB.
 */
const CACHE_BYTES = 64 << 20;
/** The heap an upload's check or a snapshot's opening may use (limits.maxSnapshotCheckMiB): the replay's check needs between 256 and 384 MiB. */
const CHECK_HEAP_MIB = 1024;
/** The heap the replay's opening and packing may use however small the uploads' bound: it needs 256–384 MiB. */
const REPLAY_HEAP_MIB = 512;

/** Which bound a thread reading a bundle ran under, for the message when it is reached. */
const heapBoundOf = (shipped: boolean) => (shipped ? "the replay's own bound" : "limits.maxSnapshotCheckMiB");

export interface SnapshotStoreOptions {
  /** past this heap, an upload's check or a snapshot's opening stops with 413, rather than the process running out of memory */
  checkHeapMiB?: number;
  replayPath?: string;
  /** the replay's held part as the build wrote it (prebuilt-held.ts) */
  replayHeldPath?: string;
  cacheBytes?: number;
  /** uploads checked at once, and waiting beyond those; past both, 503 busy */
  concurrentChecks?: number;
  queuedChecks?: number;
  /** how a bundle is opened: in a thread (the server), or `openHere` where no thread entry is bundled (tests, tools) */
  open?: SnapshotOpener;
  /** how an upload is checked: in a thread (the server), or `checkHere` likewise */
  check?: UploadChecker;
}

/**
 * Opens a bundle. `shipped`: the replay, which this code built (a test checks it against a fresh build), is read without
 * the checks an upload's bundle passes again as it opens (one a newer replica stored may be of a newer format).
 */
export type SnapshotOpener = (bytes: Buffer, maxBytes: number, heapMiB: number, shipped: boolean) => Promise<OpenedSnapshot>;

/** On the calling thread: for tests and tools that run outside Next, which alone bundles a thread's TypeScript entry. */
export const openHere: SnapshotOpener = async (bytes, maxBytes, _heapMiB, shipped) => opened(openingReader(shipped)(bytes, maxBytes));

/** Checks an upload and packs it again, bounded in heap as an opening is. */
export type UploadChecker = (bytes: Buffer, maxBytes: number, heapMiB: number) => Promise<CheckedUpload>;

/** On the calling thread, as openHere. */
export const checkHere: UploadChecker = async (bytes, maxBytes) => checkedUpload(bytes, maxBytes);

export class SnapshotStore {
  /** Oldest first. */
  private readonly cache = new Map<string, OpenedSnapshot>();
  /** Snapshots being opened: requests that arrive meanwhile wait for the same one. */
  private readonly opening = new Map<string, Promise<HeldSnapshot>>();
  private readonly openBundle: SnapshotOpener;
  private readonly checkBundle: UploadChecker;

  private readonly replayPath: string;
  private readonly replayHeldPath: string;
  private readonly cacheBytes: number;
  private readonly checkHeapMiB: number;
  private readonly checks: Gate;

  constructor(
    private readonly bundles: BundleStore,
    readonly maxBytes: number,
    options: SnapshotStoreOptions = {},
  ) {
    this.replayPath = options.replayPath ?? REPLAY_BUNDLE_PATH;
    this.replayHeldPath = options.replayHeldPath ?? prebuiltHeldPath();
    this.cacheBytes = options.cacheBytes ?? CACHE_BYTES;
    this.checkHeapMiB = options.checkHeapMiB ?? CHECK_HEAP_MIB;
    this.openBundle = options.open ?? openInThread;
    this.checkBundle = options.check ?? checkInThread;
    this.checks = new Gate(
      options.concurrentChecks ?? 1,
      options.queuedChecks ?? 4,
      (running, waiting) =>
        new BusyFailure(
          `the server is busy with checking other snapshot uploads: ${running} running and ${waiting} waiting; try again in ${CHECK_RETRY_SECONDS} s`,
          CHECK_RETRY_SECONDS,
        ),
    );
  }

  /** The snapshots kept last, newest first (the replay is always there besides). */
  recent(limit: number): Promise<KeptBundle[]> {
    return this.bundles.recent(limit);
  }

  /** The stored bundle as it was kept (what "Download snapshot" sends for an open snapshot). */
  async read(id: string): Promise<Buffer> {
    if (!ID.test(id)) throw badRequest(`parameter snapshot: "${id.slice(0, 40)}" is not a snapshot id`);
    const bytes = id === REPLAY_ID ? await readFile(this.replayPath).catch(() => undefined) : await this.bundles.read(id);
    if (!bytes)
      throw new ApiFailure(
        404,
        "not_found",
        id === REPLAY_ID ? "the replay bundle is missing from this checkout: run npm run replay:build" : `no snapshot with id ${id}`,
      );
    return bytes;
  }

  /**
   * The bundle to download for an open snapshot: as stored, or packed again (in a thread) with the notes added to it
   * here and the view it is downloaded from.
   */
  async reshared(id: string, added: { markers: SnapshotMarker[]; initialView?: Snapshot["initialView"] }): Promise<Buffer> {
    const bytes = await this.read(id);
    if (added.markers.length === 0 && !added.initialView) return bytes;
    const { maxBytes, heapMiB, shipped } = this.boundsOf(id);
    const packer = new Worker(new URL("./reshare-worker.ts", import.meta.url), {
      workerData: { bytes, maxBytes, ...added },
      resourceLimits: { maxOldGenerationSizeMb: heapMiB },
    });
    const packed = await runTask<Uint8Array>(packer, "packing the snapshot again").catch((error: unknown) => {
      throw outOfMemory(error, `packing this snapshot again needs more than ${heapMiB} MiB of memory (${heapBoundOf(shipped)})`);
    });
    return Buffer.from(packed.buffer, packed.byteOffset, packed.byteLength);
  }

  /**
   * How a stored bundle is read: the most it may hold, the most memory a thread opening or packing it may take, and
   * whether it ships with Churnscope. The replay is ours: larger than an upload may be, needing more memory than the
   * smallest bound uploads may be given (64 MiB, past which V8 can end the whole process instead of the thread), and
   * read as built; uploads were checked on the way in.
   */
  private boundsOf(id: string): { maxBytes: number; heapMiB: number; shipped: boolean } {
    return id === REPLAY_ID
      ? { maxBytes: Math.max(this.maxBytes, REPLAY_MAX_BYTES), heapMiB: Math.max(this.checkHeapMiB, REPLAY_HEAP_MIB), shipped: true }
      : { maxBytes: this.maxBytes, heapMiB: this.checkHeapMiB, shipped: false };
  }

  /** The most a bundle may hold (boundsOf). */
  maxBytesOf(id: string): number {
    return this.boundsOf(id).maxBytes;
  }

  /** What the server keeps of a snapshot (all but its object writes), opened on first use. */
  async open(id: string): Promise<HeldSnapshot> {
    const hit = this.cache.get(id);
    if (hit) return hit.snapshot;
    return joinInFlight(this.opening, id, () => this.openAndKeep(id));
  }

  private async openAndKeep(id: string): Promise<HeldSnapshot> {
    const { maxBytes, heapMiB, shipped } = this.boundsOf(id);
    const bytes = await this.read(id);
    const prebuilt = id === REPLAY_ID ? readPrebuiltHeld(bytes, this.replayHeldPath) : undefined;
    return this.keep(id, prebuilt ?? (await this.openBundle(bytes, maxBytes, heapMiB, shipped)));
  }

  /** Keeps an opened snapshot, and as many of the others as the cache's budget allows, oldest out first. */
  private keep(id: string, bundle: OpenedSnapshot): HeldSnapshot {
    this.cache.set(id, bundle);
    let held = [...this.cache.values()].reduce((sum, entry) => sum + entry.heldBytes, 0);
    for (const [oldId, entry] of this.cache) {
      if (held <= this.cacheBytes || oldId === id) break;
      this.cache.delete(oldId);
      held -= entry.heldBytes;
    }
    return bundle.snapshot;
  }

  /**
   * Validates an uploaded bundle and stores it re-encoded (in a thread: see upload-worker.ts); answers its id and
   * what it holds. The thread sends back the held part too, kept as opening it would keep it, so the page the
   * upload goes to next does not unpack and parse it all again (2.6 s for the replay's size).
   */
  async put(bytes: Buffer): Promise<SnapshotInfo> {
    const { id, encoded, held, heldJson } = await this.checks.run(() => this.checkBundle(bytes, this.maxBytes, this.checkHeapMiB));
    const writing = this.bundles.write(id, encoded);
    // Parsed while the bundle is written, and kept once it is stored.
    const opening = openedFrom(heldJson);
    await writing;
    this.keep(id, opening);
    return held;
  }
}

/** When an upload refused for the queue of checks is told to come back: about two checks of the replay's size. */
const CHECK_RETRY_SECONDS = 10;

/** How long a check may run: generous for a bundle of ordinary shape (the replay's 2.7 MB take about 3 s). */
const checkDeadlineMs = (packedBytes: number) => 10_000 + (4_000 * packedBytes) / 1_048_576;

async function checkInThread(bytes: Buffer, maxBytes: number, heapMiB: number): Promise<CheckedUpload> {
  // Bounded in memory and time, because what a bundle costs to parse depends on its shape more than its size:
  // 60 KB packed of empty arrays unpack to 60 MiB that take 1.6 GB and 11 s to parse. Past a bound the thread
  // stops, not the process.
  const checker = new Worker(new URL("./upload-worker.ts", import.meta.url), {
    workerData: { bytes, maxBytes },
    resourceLimits: { maxOldGenerationSizeMb: heapMiB },
  });
  const deadlineMs = checkDeadlineMs(bytes.length);
  const shape = "it holds more, or smaller, pieces than a snapshot of its size should";
  return runTask<CheckedUpload>(checker, "checking the upload", { deadlineMs }).catch((error: unknown) => {
    if ((error as { code?: unknown } | null)?.code === DEADLINE_CODE)
      throw tooLarge(`checking this snapshot took longer than ${Math.round(deadlineMs / 1000)} s: ${shape}`);
    throw outOfMemory(error, `checking this snapshot needs more than ${heapMiB} MiB of memory (limits.maxSnapshotCheckMiB): ${shape}`);
  });
}

/** In a thread bounded in memory as an upload's check is (it passed one, unless it is the replay, which is ours). */
async function openInThread(bytes: Buffer, maxBytes: number, heapMiB: number, shipped: boolean): Promise<OpenedSnapshot> {
  // Turbopack bundles the thread's entry (`new URL(…)`).
  const opener = new Worker(new URL("./open-worker.ts", import.meta.url), {
    workerData: { bytes, maxBytes, shipped },
    resourceLimits: { maxOldGenerationSizeMb: heapMiB },
  });
  return runTask<OpenedSnapshot>(opener, "opening the snapshot").catch((error: unknown) => {
    throw outOfMemory(error, `opening this snapshot needs more than ${heapMiB} MiB of memory (${heapBoundOf(shipped)})`);
  });
}

/** A thread stopped at its heap bound is a 413 that says which bound; any other failure stays as it was. */
function outOfMemory(error: unknown, message: string): unknown {
  return (error as { code?: unknown } | null)?.code === "ERR_WORKER_OUT_OF_MEMORY" ? tooLarge(message) : error;
}
