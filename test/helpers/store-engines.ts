/**
 * Both store engines for one parameterised suite: `describe.each(storeEngines())` runs it on a fresh SQLite file and
 * on a fresh database of a real PostgreSQL server, which the first PostgreSQL case starts and the file's end stops.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll } from "vitest";
import { openPostgres } from "@/lib/store/engine/open-postgres";
import { PostgresEngine, type PostgresSettings } from "@/lib/store/engine/postgres";
import { SqliteEngine } from "@/lib/store/engine/sqlite";
import type { SqlEngine } from "@/lib/store/engine/types";
import { FileBundles, type BundleStore } from "@/lib/snapshot/bundles";
import { NoteStore } from "@/lib/store/notes";
import { EngineBundles } from "@/lib/store/snapshot-bundles";
import { startPostgres, type TestPostgres } from "./postgres";

export const postgresSettings = (url: string, overrides: Partial<PostgresSettings> = {}): PostgresSettings => ({
  url,
  poolSize: 4,
  tls: { mode: "disable" },
  connectTimeoutMs: 5000,
  statementTimeoutMs: 10_000,
  ...overrides,
});

export interface StoreEngine {
  name: "SQLite" | "PostgreSQL";
  /** the engine contract on a fresh, empty database */
  bare(): Promise<SqlEngine>;
  /** notes on a fresh store */
  notes(): Promise<NoteStore>;
  /** where a fresh store keeps uploaded snapshots: files beside the SQLite files, a table of the PostgreSQL database */
  bundles(): Promise<BundleStore>;
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
  afterAll(async () => {
    await Promise.all(opened.splice(0).map((e) => e.close().catch(() => undefined)));
    await (await server)?.stop();
  });
}

const freshDir = () => mkdtempSync(join(tmpdir(), "churnscope-store-"));
const freshDatabase = async () => (await testPostgres()).database(`store_${process.pid}_${++databases}`);
const kept = <T extends { close(): Promise<void> }>(value: T) => (opened.push(value), value);

/** Called where a file's suites are declared (its end stops the server then). */
export function storeEngines(): [StoreEngine["name"], StoreEngine][] {
  arrangeStop();
  const sqlite: StoreEngine = {
    name: "SQLite",
    bare: async () => new SqliteEngine(join(freshDir(), "store.sqlite")),
    notes: async () => NoteStore.sqlite(join(freshDir(), "notes.sqlite")),
    bundles: async () => new FileBundles(join(freshDir(), "snapshots")),
  };
  const postgres: StoreEngine = {
    name: "PostgreSQL",
    bare: async () => kept(new PostgresEngine(postgresSettings(await freshDatabase()))),
    notes: async () => NoteStore.in(kept(await openPostgres(postgresSettings(await freshDatabase())))),
    bundles: async () => new EngineBundles(kept(await openPostgres(postgresSettings(await freshDatabase())))),
  };
  return [
    ["SQLite", sqlite],
    ["PostgreSQL", postgres],
  ];
}
