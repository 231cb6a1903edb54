/**
 * Where object writes are read from: a snapshot's writes (the replay included), loaded once into a
 * SQLite store beside the snapshot through the recorder's own core, or the live store the recorder
 * writes. A store built from an older bundle is rebuilt.
 */
import { existsSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { ApiFailure } from "../api/envelope";
import type { AppConfig } from "../config/load";
import { joinInFlight } from "../runtime/in-flight";
import { OpenedAtStart } from "../runtime/opened-at-start";
import { runService, runTask } from "../runtime/threads";
import { REPLAY_ID } from "../snapshot/store";
import type { ImportedCount } from "./import-worker";
import type { StoreTarget } from "./database";
import { describeTarget } from "./engine/open-postgres";
import { adoptPrebuilt, snapshotStoreDigest, type ImportJob } from "./snapshot-store";
import { WriteStore } from "./store";

/**
 * Where the live store is: its SQLite file in the data directory, or the configured PostgreSQL database (with a pool of
 * `poolSize` connections: the server's, or a thread's own smaller one).
 */
export function liveStoreTarget(config: Pick<AppConfig, "dataDir" | "store">, poolSize?: number): StoreTarget {
  if (config.store.engine === "sqlite") return { engine: "sqlite", path: join(config.dataDir, "churnscope.sqlite") };
  const { postgres, setting } = config.store;
  return { engine: "postgres", settings: { ...postgres, poolSize: poolSize ?? postgres.poolSize }, setting };
}

/** Says where a store is without its password: a SQLite file's path, or PostgreSQL's host and database. */
export function describeStoreTarget(target: StoreTarget): string {
  if (target.engine === "sqlite") return target.path;
  const { host, port, database } = describeTarget(target.settings.url);
  return `PostgreSQL at ${host}:${port}/${database}`;
}

/** What the object stores need of the server: where data lives, the profiles, and the snapshots' bundles. */
export interface StoreContext {
  config: Pick<AppConfig, "dataDir" | "profiles" | "store">;
  snapshots: {
    /** a checked snapshot: how many object writes it holds, null for none */
    open(id: string): Promise<{ objectWriteCount: number | null; auditRequestCount: number; apiCallRows: number }>;
    read(id: string): Promise<Buffer>;
    maxBytesOf(id: string): number;
  };
}

/**
 * The object stores of one server: the live store, opened once at start (with its roll-up thread), and
 * each snapshot's store, built on first use. Held by the server's context, so one process has one of each.
 */
export class ObjectStores {
  /** what the watch recorder and audit ingest write, opened at start with its roll-up thread */
  readonly live: OpenedAtStart<WriteStore>;
  private readonly snapshots = new Map<string, WriteStore>();
  /** Snapshot stores being opened or built: requests that arrive meanwhile wait for the same one. */
  private readonly building = new Map<string, Promise<WriteStore>>();

  /** `live`: the live store as the server opens it (liveObjectStore), when the server has one already */
  constructor(
    private readonly ctx: StoreContext,
    live?: OpenedAtStart<WriteStore>,
  ) {
    this.live = live ?? liveObjectStore(ctx.config);
  }

  /** The live store opened at start (a 503 until it has). */
  liveStore(): WriteStore {
    return this.live.get();
  }

  /** The snapshot's store, for its object writes or (the Clients view) its audit requests: a 404 when it holds none. */
  async snapshotStore(id: string, reading: "object writes" | "audit requests" | "api calls" = "object writes"): Promise<WriteStore> {
    const held = await this.ctx.snapshots.open(id);
    if (reading === "object writes" && held.objectWriteCount === null)
      throw new ApiFailure(404, "not_in_snapshot", "this snapshot holds no object writes (it was taken where no recorder ran)");
    if (reading === "api calls" && held.apiCallRows === 0 && held.auditRequestCount === 0)
      throw new ApiFailure(
        404,
        "not_in_snapshot",
        "this snapshot holds no API calls (it was taken before snapshots carried them, or where no audit log was ingested)",
      );
    if (reading === "audit requests" && held.auditRequestCount === 0)
      throw new ApiFailure(
        404,
        "not_in_snapshot",
        "this snapshot holds no audit requests (it was taken before snapshots carried them, or where none were ingested)",
      );
    const cached = this.snapshots.get(id);
    if (cached) return cached;
    return joinInFlight(this.building, id, async () => {
      const store = await openOrBuild(this.ctx, id);
      this.snapshots.set(id, store);
      return store;
    });
  }
}

async function openOrBuild(ctx: StoreContext, id: string): Promise<WriteStore> {
  const bundle = await ctx.snapshots.read(id);
  // Rebuilt when the bundle or the profiles change: classification depends on both.
  const digest = snapshotStoreDigest(bundle, ctx.config.profiles);
  const dir = join(ctx.config.dataDir, "snapshots");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${id}.sqlite`);
  if (existsSync(path)) {
    const store = await WriteStore.open(path);
    if ((await store.getMeta("digest")) === digest) return store;
    await store.close();
    for (const suffix of ["", "-wal", "-shm"]) rmSync(`${path}${suffix}`, { force: true });
  }
  // The replay's store, built once at build time: a copy takes a fraction of a second where building takes seconds.
  if (id === REPLAY_ID && adoptPrebuilt(path, digest)) return WriteStore.open(path);
  await buildInThread({ path, bundle, maxBytes: ctx.snapshots.maxBytesOf(id), profiles: ctx.config.profiles, digest });
  return WriteStore.open(path);
}

async function buildInThread(job: ImportJob): Promise<void> {
  // Turbopack bundles the thread's entry (`new URL(…)`), as for the roll-up thread below.
  const builder = new Worker(new URL("./import-worker.ts", import.meta.url), { workerData: job });
  await runTask<ImportedCount>(builder, "building the snapshot's object store");
}

/** The live store, opened at the server's start (a 503 until then), with its roll-up thread. */
export function liveObjectStore(config: Pick<AppConfig, "dataDir" | "store">): OpenedAtStart<WriteStore> {
  return new OpenedAtStart("the live object store", () => openLiveStore(config));
}

async function openLiveStore(config: Pick<AppConfig, "dataDir" | "store">): Promise<WriteStore> {
  mkdirSync(config.dataDir, { recursive: true });
  const store = await WriteStore.open(liveStoreTarget(config));
  // The Objects ranking's rollups, whoever fills the store, in a thread with its own connection: a
  // step takes 35 ms warm and hundreds when the store's pages must first be read, and no request
  // should wait behind one. Turbopack bundles the thread's entry (`new URL(…)`).
  // Rankings stay exact without rollups, only slower; the log says why.
  runService(new Worker(new URL("./roll-worker.ts", import.meta.url), { workerData: { target: liveStoreTarget(config, 2) } }), "objects rollups");
  return store;
}
