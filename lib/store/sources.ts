/**
 * Where object writes are read from: a snapshot's writes (the replay included), loaded once into a
 * SQLite store beside the snapshot through the recorder's own core, or the live store the recorder
 * writes. A store built from an older bundle is rebuilt.
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { ApiFailure } from "../api/envelope";
import type { AppConfig } from "../config/load";
import type { SnapshotStore } from "../snapshot/store";
import { joinInFlight } from "../runtime/in-flight";
import { perProcess } from "../runtime/per-process";
import { threadResult } from "../runtime/thread-outcome";
import type { ImportedCount, ImportJob } from "./import-worker";
import { WriteStore } from "./store";

/** What the object stores need of the server: where data lives, the profiles, and the snapshots. */
export interface StoreContext {
  config: Pick<AppConfig, "dataDir" | "profiles">;
  snapshots: SnapshotStore;
}

const STORE_FORMAT = "3";
// Per process: each copy of this module opened its own connection and started its own roll-up.
const open = perProcess("stores", () => new Map<string, WriteStore>());
/** Snapshot stores being opened or built: requests that arrive meanwhile wait for the same one. */
const building = perProcess("storeBuilds", () => new Map<string, Promise<WriteStore>>());

export async function snapshotStore(ctx: StoreContext, id: string): Promise<WriteStore> {
  const cached = open.get(id);
  if (cached) return cached;
  if ((await ctx.snapshots.open(id)).objectWriteCount === null) throw new ApiFailure(404, "not_in_snapshot", "this snapshot holds no object writes (it was taken where no recorder ran)");
  return joinInFlight(building, id, () => openOrBuild(ctx, id));
}

async function openOrBuild(ctx: StoreContext, id: string): Promise<WriteStore> {
  const bundle = ctx.snapshots.read(id);
  // Rebuilt when the bundle or the profiles change: classification depends on both.
  const digest = createHash("sha256").update(bundle).update(STORE_FORMAT).update(JSON.stringify(ctx.config.profiles)).digest("hex").slice(0, 16);
  const dir = join(ctx.config.dataDir, "snapshots");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${id}.sqlite`);
  if (existsSync(path)) {
    const store = new WriteStore(path);
    if (store.getMeta("digest") === digest) {
      open.set(id, store);
      return store;
    }
    store.close();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
  }
  await buildInThread({ path, bundle, maxBytes: ctx.snapshots.maxBytesOf(id), profiles: ctx.config.profiles, digest });
  const store = new WriteStore(path);
  open.set(id, store);
  return store;
}

async function buildInThread(job: ImportJob): Promise<void> {
  // Turbopack bundles the thread's entry (`new URL(…)`), as for the roll-up thread below.
  const builder = new Worker(new URL("./import-worker.ts", import.meta.url), { workerData: job });
  await threadResult<ImportedCount>(builder, "building the snapshot's object store");
}

/** The live store: what the watch recorder writes. */
export function liveStore(ctx: StoreContext): WriteStore {
  const cached = open.get("");
  if (cached) return cached;
  mkdirSync(ctx.config.dataDir, { recursive: true });
  const path = join(ctx.config.dataDir, "churnscope.sqlite");
  const store = new WriteStore(path);
  open.set("", store);
  // The Objects ranking's rollups, whoever fills the store, in a thread with its own connection: a
  // step takes 35 ms warm and hundreds when the store's pages must first be read, and no request
  // should wait behind one. Turbopack bundles the thread's entry (`new URL(…)`).
  const roller = new Worker(new URL("./roll-worker.ts", import.meta.url), { workerData: { path } });
  roller.on("message", (message: { error?: string }) => console.error(`objects rollups: ${message.error}`));
  // Rankings stay exact without rollups, only slower; the log says why.
  roller.on("error", (error) => console.error(`objects rollups: the thread stopped: ${error.message}`));
  roller.unref();
  return store;
}

