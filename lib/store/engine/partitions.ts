/**
 * PostgreSQL's time partitions: the tables that grow with every write (writes, field changes, audit requests) are
 * split by UTC day of `ts_ms`, [day·24 h, (day+1)·24 h), so retention drops whole days instead of deleting rows.
 * A day's partition is made before its first row is stored; which days a batch needs, and which days retention may
 * drop, are decided here.
 */
import type { SqlQueries } from "./types";

export const PARTITIONED_TABLES = ["writes", "field_changes", "audit_requests", "api_calls", "api_watch_ends"] as const;
export type PartitionedTable = (typeof PARTITIONED_TABLES)[number];

const DAY_MS = 86_400_000;
export const partitionDayOf = (tsMs: number) => Math.floor(tsMs / DAY_MS);
export function partitionName(table: PartitionedTable, day: number): string {
  if (!Number.isSafeInteger(day) || day < 0) throw new RangeError(`no partition holds day ${day}: times before 1970 are not stored`);
  return `${table}_d${day}`;
}

/** The distinct days of these times, in order. */
export function daysOf(timesMs: Iterable<number>): number[] {
  return [...new Set(Array.from(timesMs, partitionDayOf))].sort((a, b) => a - b);
}

/** Of the partitions listed, those wholly before `beforeMs` (every row older than it), which retention drops. */
export function partitionsBefore(names: readonly string[], table: PartitionedTable, beforeMs: number): string[] {
  const prefix = `${table}_d`;
  return names.filter((name) => {
    if (!name.startsWith(prefix) || !/^\d+$/.test(name.slice(prefix.length))) return false;
    return (Number(name.slice(prefix.length)) + 1) * DAY_MS <= beforeMs;
  });
}

/** Lock ids per table, so that replicas making the same day's partition take turns instead of failing. */
const LOCKS: Record<PartitionedTable, number> = {
  writes: 7_420_135_101,
  field_changes: 7_420_135_102,
  audit_requests: 7_420_135_103,
  api_calls: 7_420_135_104,
  api_watch_ends: 7_420_135_105,
};

/** Makes each day's partition of `table` that does not exist yet, in the caller's transaction. */
export async function ensurePartitions(tx: SqlQueries, table: PartitionedTable, days: readonly number[], known: Set<string>): Promise<void> {
  const missing = days.filter((day) => !known.has(partitionName(table, day)));
  if (missing.length === 0) return;
  await tx.get("SELECT pg_advisory_xact_lock(?)", [LOCKS[table]]);
  for (const day of missing) {
    const name = partitionName(table, day);
    await tx.exec(`CREATE TABLE IF NOT EXISTS ${name} PARTITION OF ${table} FOR VALUES FROM (${day * DAY_MS}) TO (${(day + 1) * DAY_MS})`);
    known.add(name);
  }
}

/** The partitions of `table` there are now. */
export async function listPartitions(tx: SqlQueries, table: PartitionedTable): Promise<string[]> {
  const rows = await tx.all<{ name: string }>(
    "SELECT c.relname AS name FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid JOIN pg_class p ON p.oid = i.inhparent WHERE p.relname = ? ORDER BY c.relname",
    [table],
  );
  return rows.map((r) => r.name);
}

/** Drops the days of `table` wholly before `beforeMs` and deletes the older rows of the day it falls in; the rows dropped or deleted. */
export async function dropBefore(tx: SqlQueries, table: PartitionedTable, beforeMs: number, known: Set<string>): Promise<number> {
  let removed = 0;
  for (const name of partitionsBefore(await listPartitions(tx, table), table, beforeMs)) {
    removed += (await tx.get<{ n: number }>(`SELECT COUNT(*) AS n FROM ${name}`))!.n;
    await tx.exec(`DROP TABLE ${name}`);
    known.delete(name);
  }
  removed += (await tx.run(`DELETE FROM ${table} WHERE ts_ms < ?`, [beforeMs])).changes;
  return removed;
}
