/**
 * Copying a SQLite store (a data directory's object store and notes) into a PostgreSQL database: table by table in
 * the order their references need, in chunks of rows by SQLite's rowid, each chunk committed together with how far
 * the copy got (in the target's meta table), so a copy stopped anywhere resumes where it was and copies no row twice.
 * At the end each table's rows are counted on both sides, and their times compared (least, greatest, and a sum
 * of each time's milliseconds into its day, which stays exact where a sum of epoch milliseconds would not). Ids are kept, so every reference
 * between rows stays true; the target's id sequences then continue after them. Roll-ups are a cache and are not
 * copied (the target rebuilds them). Uploaded snapshot bundles are copied into the database's bundle table, where
 * every replica finds them.
 */
import Database from "better-sqlite3";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { STORE_SCHEMA_VERSION } from "./database";
import { NOTES_SCHEMA_VERSION } from "./notes";
import { daysOf, ensurePartitions, PARTITIONED_TABLES, type PartitionedTable } from "./engine/partitions";
import { insertRows } from "./engine/insert-rows";
import type { SqlEngine, SqlValue } from "./engine/types";
import { EngineBundles } from "./snapshot-bundles";

/** Each table, the file it is in, in the order references need (objects before what names them). */
const TABLES: readonly { file: "churnscope.sqlite" | "notes.sqlite"; table: string }[] = [
  ...[
    "objects",
    "first_seen",
    "latest",
    "writes",
    "field_changes",
    "gaps",
    "meta",
    "audit_requests",
    "audit_latest",
    "audit_bucket_objects",
    "audit_bucket_sources",
    "changes",
    "api_names",
    "api_calls",
    "api_watch_ends",
    "api_open_watches",
    "api_sources",
  ].map((table) => ({ file: "churnscope.sqlite" as const, table })),
  { file: "notes.sqlite", table: "notes" },
];
const SCHEMA_VERSIONS = { "churnscope.sqlite": STORE_SCHEMA_VERSION, "notes.sqlite": NOTES_SCHEMA_VERSION };
/** Tables whose ids the target's sequences hand out after the copy. */
const SEQUENCED = ["objects", "writes", "audit_requests", "api_names", "notes"];
/** Meta values that describe a cache (the roll-ups), which is not copied. */
const NOT_COPIED_META = ["rollup-format"];
const PROGRESS = "store-copy:";

export class CopyError extends Error {}

export interface TableCount {
  table: string;
  sourceRows: number;
  targetRows: number;
  /** where the table has ts_ms: its least, its greatest and the sum of each time's milliseconds into its day, on each side */
  sourceTimes: string | null;
  targetTimes: string | null;
  same: boolean;
}

export interface CopyReport {
  resumed: boolean;
  copiedRows: number;
  /** uploaded snapshot bundles in the data directory, and how many of them the database holds now */
  bundles: { source: number; target: number };
  tables: TableCount[];
  same: boolean;
}

export interface CopyOptions {
  /** the data directory holding churnscope.sqlite (and notes.sqlite, if any notes were taken) */
  dataDir: string;
  target: SqlEngine;
  chunkRows?: number;
  onProgress?: (table: string, copied: number, total: number) => void;
}

function openSource(path: string, file: keyof typeof SCHEMA_VERSIONS): Database.Database {
  const db = new Database(path, { readonly: true, fileMustExist: true });
  const version = (db.prepare("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations").get() as { v: number }).v;
  const known = SCHEMA_VERSIONS[file];
  if (version !== known) {
    db.close();
    throw new CopyError(
      version < known
        ? `${file} has schema version ${version}; start this Churnscope on the data directory once (it brings the file up to version ${known}), stop it, then copy`
        : `${file} has schema version ${version}, from a newer Churnscope; copy it with that version`,
    );
  }
  return db;
}

const hasTime = (columns: string[]) => columns.includes("ts_ms");
const sourceWhere = (table: string) => (table === "meta" ? ` WHERE key NOT IN (${NOT_COPIED_META.map(() => "?").join(", ")})` : "");
const sourceParams = (table: string) => (table === "meta" ? NOT_COPIED_META : []);
const targetWhere = (table: string) => (table === "meta" ? ` WHERE key NOT LIKE '${PROGRESS}%'` : "");

export async function copyStore({ dataDir, target, chunkRows = 5000, onProgress }: CopyOptions): Promise<CopyReport> {
  const source = resolve(dataDir);
  const storeFile = join(source, "churnscope.sqlite");
  if (!existsSync(storeFile)) throw new CopyError(`${storeFile} does not exist: --from takes the data directory of the store to copy`);
  const files = { "churnscope.sqlite": openSource(storeFile, "churnscope.sqlite") } as Partial<Record<keyof typeof SCHEMA_VERSIONS, Database.Database>>;
  if (existsSync(join(source, "notes.sqlite"))) files["notes.sqlite"] = openSource(join(source, "notes.sqlite"), "notes.sqlite");
  try {
    const resumed = await checkTarget(target, source);
    const partitions = new Set<string>();
    let copiedRows = 0;
    for (const { file, table } of TABLES) {
      const db = files[file];
      if (!db) continue;
      copiedRows += await copyTable(db, target, table, Math.max(1, chunkRows), partitions, onProgress);
    }
    await target.transaction(async (tx) => {
      for (const table of SEQUENCED)
        await tx.get(
          `SELECT setval(pg_get_serial_sequence('${table}', 'id'), GREATEST((SELECT MAX(id) FROM ${table}), 1), (SELECT COUNT(*) > 0 FROM ${table}))`,
        );
    });
    const bundles = await copyBundles(join(source, "snapshots"), target);
    const tables = await countBoth(files, target);
    return { resumed, copiedRows, bundles, tables, same: tables.every((t) => t.same) && bundles.source === bundles.target };
  } finally {
    for (const db of Object.values(files)) db?.close();
  }
}

/** The data directory's uploaded snapshots (`<id>.json.gz`, an id being a hash of the bytes) into the bundle table; one kept already is left as it is. */
async function copyBundles(dir: string, target: SqlEngine): Promise<{ source: number; target: number }> {
  const names = existsSync(dir) ? readdirSync(dir).filter((name) => /^[0-9a-f]+\.json\.gz$/.test(name)) : [];
  const bundles = new EngineBundles(target);
  let held = 0;
  for (const name of names) {
    const id = name.slice(0, -".json.gz".length);
    await bundles.write(id, readFileSync(join(dir, name)));
    if (await bundles.read(id)) held++;
  }
  return { source: names.length, target: held };
}

/** A fresh target, or one a copy from this same data directory began: anything else is refused. */
async function checkTarget(target: SqlEngine, source: string): Promise<boolean> {
  return target.transaction(async (tx) => {
    const began = await tx.get<{ value: string }>("SELECT value FROM meta WHERE key = ?", [`${PROGRESS}source`]);
    if (began) {
      if (began.value !== source) throw new CopyError(`the target database holds a copy from ${began.value}, not ${source}: copy into an empty database`);
      return true;
    }
    for (const { table } of TABLES) {
      const rows = await tx.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${table}`);
      if (rows!.n > 0) throw new CopyError(`the target database already holds a store (${table} has ${rows!.n} rows): copy into an empty database`);
    }
    await tx.run("INSERT INTO meta (key, value) VALUES (?, ?)", [`${PROGRESS}source`, source]);
    return false;
  });
}

async function copyTable(
  db: Database.Database,
  target: SqlEngine,
  table: string,
  chunkRows: number,
  partitions: Set<string>,
  onProgress?: CopyOptions["onProgress"],
): Promise<number> {
  const columns = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
  const total = (db.prepare(`SELECT COUNT(*) AS n FROM ${table}${sourceWhere(table)}`).get(...sourceParams(table)) as { n: number }).n;
  const progressKey = `${PROGRESS}${table}`;
  const saved = await target.get<{ value: string }>("SELECT value FROM meta WHERE key = ?", [progressKey]);
  let { rowid, rows } = saved ? (JSON.parse(saved.value) as { rowid: number; rows: number }) : { rowid: -1, rows: 0 };
  // A table keyed by its rows' time has no rowid (api_calls): read in whole times, the chunk's last time where another begins.
  const keyedByTime = (db.prepare("SELECT 1 FROM sqlite_master WHERE name = ? AND sql LIKE '%WITHOUT ROWID%'").get(table) ?? null) !== null;
  const read = keyedByTime
    ? db.prepare(
        `SELECT ts_ms AS copy_rowid, ${columns.join(", ")} FROM ${table} WHERE ts_ms > @after AND ts_ms <= COALESCE((SELECT ts_ms FROM ${table} WHERE ts_ms > @after ORDER BY ts_ms LIMIT 1 OFFSET @offset), 9e18) ORDER BY ts_ms`,
      )
    : db.prepare(
        `SELECT rowid AS copy_rowid, ${columns.join(", ")} FROM ${table} WHERE rowid > ?${sourceWhere(table).replace(" WHERE", " AND")} ORDER BY rowid LIMIT ?`,
      );
  const partitioned = (PARTITIONED_TABLES as readonly string[]).includes(table);
  let copied = 0;
  for (;;) {
    const chunk = (keyedByTime ? read.all({ after: rowid, offset: chunkRows - 1 }) : read.all(rowid, ...sourceParams(table), chunkRows)) as Record<
      string,
      SqlValue
    >[];
    if (chunk.length === 0) break;
    await target.transaction(async (tx) => {
      if (partitioned) await ensurePartitions(tx, table as PartitionedTable, daysOf(chunk.map((r) => Number(r.ts_ms))), partitions);
      await insertRows(
        tx,
        `INSERT INTO ${table} (${columns.join(", ")})`,
        chunk.map((row) => columns.map((c) => row[c])),
      );
      const last = chunk.at(-1)!.copy_rowid as number;
      await tx.run("INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value", [
        progressKey,
        JSON.stringify({ rowid: last, rows: rows + chunk.length }),
      ]);
    });
    rowid = chunk.at(-1)!.copy_rowid as number;
    rows += chunk.length;
    copied += chunk.length;
    onProgress?.(table, rows, total);
  }
  return copied;
}

async function countBoth(files: Partial<Record<string, Database.Database>>, target: SqlEngine): Promise<TableCount[]> {
  const counts: TableCount[] = [];
  for (const { file, table } of TABLES) {
    const db = files[file];
    if (!db) continue;
    const columns = (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
    const times = hasTime(columns) ? ", MIN(ts_ms) AS least, MAX(ts_ms) AS greatest, SUM(ts_ms % 86400000) AS into_days" : "";
    type Row = { n: number; least?: number | null; greatest?: number | null; into_days?: number | null };
    const from = db.prepare(`SELECT COUNT(*) AS n${times} FROM ${table}${sourceWhere(table)}`).get(...sourceParams(table)) as Row;
    const to = (await target.get<Row>(`SELECT COUNT(*) AS n${times} FROM ${table}${targetWhere(table)}`))!;
    const timesOf = (row: Row) => (times ? `${row.least ?? "-"}…${row.greatest ?? "-"} Σ${row.into_days ?? 0}` : null);
    counts.push({
      table,
      sourceRows: from.n,
      targetRows: to.n,
      sourceTimes: timesOf(from),
      targetTimes: timesOf(to),
      same: from.n === to.n && timesOf(from) === timesOf(to),
    });
  }
  return counts;
}
