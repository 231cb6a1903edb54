/**
 * Both store engines for one parameterised suite: `describe.each(storeEngines())` runs it on a fresh SQLite file and
 * on a fresh database of a real PostgreSQL server, which the first PostgreSQL case starts and the file's end stops.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, vi } from "vitest";
import { openPostgres } from "@/lib/store/engine/open-postgres";
import { PostgresEngine } from "@/lib/store/engine/postgres";
import { SqliteEngine } from "@/lib/store/engine/sqlite";
import type { SqlEngine } from "@/lib/store/engine/types";
import { FileBundles, type BundleStore } from "@/lib/snapshot/bundles";
import { NoteStore } from "@/lib/store/notes";
import { EngineBundles } from "@/lib/store/snapshot-bundles";
import { WriteStore } from "@/lib/store/store";
import { startPostgres, type TestPostgres } from "./postgres";
import { postgresSettings } from "./store-at";

export { postgresSettings } from "./store-at";

export interface StoreEngine {
  name: "SQLite" | "PostgreSQL";
  /** the engine contract on a fresh, empty database */
  bare(): Promise<SqlEngine>;
  /** notes on a fresh store */
  notes(): Promise<NoteStore>;
  /** where a fresh store keeps uploaded snapshots: files beside the SQLite files, a table of the PostgreSQL database */
  bundles(): Promise<BundleStore>;
  /** the object store on a fresh database (closed at the file's end) */
  writeStore(): Promise<WriteStore>;
  /** where a fresh object store is, as another process is told: a SQLite file's path, or a PostgreSQL URL */
  place(): Promise<string>;
}

let server: Promise<TestPostgres> | undefined;
let databases = 0;
const opened: { close(): Promise<void> }[] = [];

/** The file's one PostgreSQL server, started on first use (after `storeEngines()` has arranged its stop). */
export function testPostgres(): Promise<TestPostgres> {
  server ??= startPostgres();
  return server;
}

let stopArranged = false;
function arrangeStop(): void {
  if (stopArranged) return;
  stopArranged = true;
  // Its own bound, past the unit tests' 10 s for hooks: on a loaded machine, closing every pool and stopping the
  // server can take longer, and a hook that times out fails the file though all its tests passed.
  afterAll(async () => {
    await Promise.all(opened.splice(0).map((e) => e.close().catch(() => undefined)));
    await (await server)?.stop();
  }, 60_000);
}

const freshDir = () => mkdtempSync(join(tmpdir(), "churnscope-store-"));
const freshDatabase = async () => (await testPostgres()).database(`store_${process.pid}_${++databases}`);
const kept = <T extends { close(): Promise<void> }>(value: T) => (opened.push(value), value);

/**
 * Called where a file's suites are declared (its end stops the server then). Each statement on PostgreSQL is a round
 * trip, and the unit tests run in parallel on two cores: such a file's tests get 30 s each.
 */
export function storeEngines(): [StoreEngine["name"], StoreEngine][] {
  arrangeStop();
  vi.setConfig({ testTimeout: 30_000 });
  const sqlite: StoreEngine = {
    name: "SQLite",
    bare: async () => new SqliteEngine(join(freshDir(), "store.sqlite")),
    notes: async () => NoteStore.sqlite(join(freshDir(), "notes.sqlite")),
    bundles: async () => new FileBundles(join(freshDir(), "snapshots")),
    writeStore: async () => kept(await WriteStore.open(join(freshDir(), "store.sqlite"))),
    place: async () => join(freshDir(), "store.sqlite"),
  };
  const postgres: StoreEngine = {
    name: "PostgreSQL",
    bare: async () => kept(new PostgresEngine(postgresSettings(await freshDatabase()))),
    notes: async () => NoteStore.in(kept(await openPostgres(postgresSettings(await freshDatabase())))),
    bundles: async () => new EngineBundles(kept(await openPostgres(postgresSettings(await freshDatabase())))),
    writeStore: async () => kept(await WriteStore.open({ engine: "postgres", settings: postgresSettings(await freshDatabase()) })),
    place: freshDatabase,
  };
  return [
    ["SQLite", sqlite],
    ["PostgreSQL", postgres],
  ];
}
