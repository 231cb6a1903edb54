/**
 * Bytes per stored write on both store engines, for the same rows: the replay's object store (104 k writes, with
 * their field changes and audit requests, as `npm run build` makes it) as a SQLite file, and the same store copied
 * by `npm run store:copy`'s core into a fresh PostgreSQL database (Debian's, on the same 2 cores and disk), whose
 * tables, partitions, indexes and TOAST are summed by PostgreSQL itself after a VACUUM. Also how fast the copy went.
 * Run: npm run build && npx tsx test/bench/store-bytes.ts
 */
import Database from "better-sqlite3";
import { copyFileSync, existsSync, statSync } from "node:fs";
import { join } from "node:path";
import { copyStore } from "@/lib/store/copy";
import { openPostgres } from "@/lib/store/engine/open-postgres";
import { startPostgres } from "../helpers/postgres";
import { ROOT } from "../helpers/root";
import { report, round } from "./report";
import { scratchDir } from "./scratch";

const REPLAY_STORE = join(ROOT, ".next", "replay-objects.sqlite");

async function main() {
  if (!existsSync(REPLAY_STORE)) throw new Error(`${REPLAY_STORE} is missing: run npm run build first`);
  const dataDir = scratchDir("bytes");
  const file = join(dataDir, "churnscope.sqlite");
  copyFileSync(REPLAY_STORE, file);
  const sqlite = new Database(file);
  // The roll-ups are a cache the copy leaves behind: both sides are measured without them.
  for (const { name } of sqlite.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name LIKE 'rank_%'").all() as { name: string }[])
    sqlite.exec(`DROP TABLE ${name}`);
  sqlite.exec("VACUUM");
  const writes = (sqlite.prepare("SELECT COUNT(*) AS n FROM writes").get() as { n: number }).n;
  const rows = (["writes", "field_changes", "audit_requests"] as const).map(
    (table) => [table, (sqlite.prepare(`SELECT COUNT(*) AS n FROM ${table}`).get() as { n: number }).n] as const,
  );
  sqlite.close();
  const sqliteBytes = statSync(file).size;

  const server = await startPostgres();
  try {
    const url = await server.database("bytes");
    const target = await openPostgres({ url, poolSize: 2, tls: { mode: "disable" }, connectTimeoutMs: 10_000, statementTimeoutMs: 600_000 });
    const startedMs = performance.now();
    const copied = await copyStore({ dataDir, target });
    const copyMs = performance.now() - startedMs;
    const emptyDatabase = Number((await server.sql("SELECT pg_database_size('postgres') AS b")).rows[0].b);
    await target.exec("VACUUM");
    // Every relation of the store's own tables: heap, indexes, TOAST, each day's partition.
    const sizes = await target.all<{ table: string; bytes: number }>(
      `SELECT COALESCE(parent.relname, c.relname) AS table, SUM(pg_total_relation_size(c.oid))::bigint AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
       LEFT JOIN pg_inherits i ON i.inhrelid = c.oid LEFT JOIN pg_class parent ON parent.oid = i.inhparent
       WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') GROUP BY 1 ORDER BY 2 DESC`,
    );
    await target.close();
    const postgresBytes = sizes.reduce((sum, s) => sum + s.bytes, 0);
    report({
      bench: "bytes per stored write, both engines, the same rows",
      writes,
      rows: Object.fromEntries(rows),
      sqlite: { fileBytes: sqliteBytes, bytesPerWrite: round(sqliteBytes / writes, 0) },
      postgres: {
        tableBytes: postgresBytes,
        bytesPerWrite: round(postgresBytes / writes, 0),
        byTable: Object.fromEntries(sizes.map((s) => [s.table, s.bytes])),
        emptyDatabaseBytes: emptyDatabase,
      },
      ratio: round(postgresBytes / sqliteBytes, 2),
      copy: { rows: copied.copiedRows, seconds: round(copyMs / 1000, 1), rowsPerSecond: round(copied.copiedRows / (copyMs / 1000), 0), same: copied.same },
    });
  } finally {
    await server.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
