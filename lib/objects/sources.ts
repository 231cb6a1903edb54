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
import type { ServerContext } from "../server/context";
import { runningRecorder } from "../server/recording";
import { importObjectWrites } from "../store/import-writes";
import { WriteStore } from "../store/store";

const STORE_FORMAT = "3";
// One per process, not per copy of this module: Next loads it once for pages and again for route
// handlers, and each copy opened its own connection and started its own roll-up.
const key = Symbol.for("churnscope.stores");
const open: Map<string, WriteStore> = ((globalThis as { [key]?: Map<string, WriteStore> })[key] ??= new Map());

export function snapshotStore(ctx: ServerContext, id: string): WriteStore {
  const cached = open.get(id);
  if (cached) return cached;
  const snapshot = ctx.snapshots.get(id);
  if (!snapshot.objectWrites) throw new ApiFailure(404, "not_in_snapshot", "this snapshot holds no object writes (it was taken where no recorder ran)");
  // Rebuilt when the bundle or the profiles change: classification depends on both.
  const digest = createHash("sha256").update(ctx.snapshots.read(id)).update(STORE_FORMAT).update(JSON.stringify(ctx.config.profiles)).digest("hex").slice(0, 16);
  const dir = join(ctx.config.dataDir, "snapshots");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${id}.sqlite`);
  let store = existsSync(path) ? new WriteStore(path) : undefined;
  if (store && store.getMeta("digest") !== digest) {
    store.close();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
    store = undefined;
  }
  if (!store) {
    store = new WriteStore(path);
    const count = importObjectWrites(store, snapshot.objectWrites, ctx.config.profiles);
    store.setMeta("digest", digest);
    store.setMeta("writes", String(count));
  }
  open.set(id, store);
  return store;
}

/** The live store: what the watch recorder writes. */
export function liveStore(ctx: ServerContext): WriteStore {
  const cached = open.get("");
  if (cached) return cached;
  mkdirSync(ctx.config.dataDir, { recursive: true });
  const path = join(ctx.config.dataDir, "churnscope.sqlite");
  const store = new WriteStore(path);
  open.set("", store);
  // The Objects ranking's rollups, whoever fills the store, in a thread with its own connection: a
  // step takes 35 ms warm and hundreds when the store's pages must first be read, and no request
  // should wait behind one. Turbopack bundles the thread's entry (`new URL(…)`).
  const roller = new Worker(new URL("../store/roll-worker.ts", import.meta.url), { workerData: { path } });
  roller.on("message", (message: { error?: string }) => console.error(`objects rollups: ${message.error}`));
  // Rankings stay exact without rollups, only slower; the log says why.
  roller.on("error", (error) => console.error(`objects rollups: the thread stopped: ${error.message}`));
  roller.unref();
  return store;
}

/** Whether the object views have live data to show: a recorder runs here, or something (a recorder, ingested audit logs) filled the store. */
export function hasLiveObjects(ctx: ServerContext): boolean {
  return runningRecorder() !== null || liveStore(ctx).kinds().length > 0;
}
