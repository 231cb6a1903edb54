/** The store's record types and the interfaces its engine implements for the recorder, audit ingest and snapshot import. */
import type { AuditRow } from "../snapshot/format/audit-rows";
import type { PartitionedTable } from "./engine/partitions";
import type { SqlEngine, SqlQueries, SqlValue } from "./engine/types";
import type { Json } from "../churn/json";
import type { RecordedChange } from "../churn/changes";
import type { ObjectKey, StoredWrite } from "../wire/objects";

/**
 * What a writer of object writes needs of a store (the watch recorder's core, snapshot import): the
 * writes, each object's first-seen and last version, meta values, and one transaction around a batch.
 */
export interface WriteRepository {
  /** whether its transactions wait on a server (PostgreSQL), whose answers a long step on this thread would hold back */
  readonly waitsOnServer: boolean;
  /** `timesMs`: when the rows the work stores were written (PostgreSQL makes their day partitions first) */
  batch<T>(work: () => Promise<T>, timesMs?: readonly number[]): Promise<T>;
  /** a burst of watched writes `record` is about to be given in the current transaction: what decides their joins, asked once */
  expectWatched(writes: readonly { key: ObjectKey; tsMs: number }[]): Promise<void>;
  record(key: ObjectKey, write: StoredWrite): Promise<unknown>;
  /** `baseline`: what it runs, for a kind whose changes are recorded (churn/changes.ts) */
  recordFirstSeen(key: ObjectKey, tsMs: number, projection: Record<string, string>, body?: Json, baseline?: RecordedChange): Promise<void>;
  /** the last version written (null body: deleted) */
  latest(key: ObjectKey): Promise<{ resourceVersion: string; body: string | null } | undefined>;
  setLatest(key: ObjectKey, resourceVersion: string, body: string | null): Promise<void>;
  /** objects of a kind on a cluster last seen alive */
  liveKeys(cluster: string, group: string, kind: string): Promise<ObjectKey[]>;
  getMeta(key: string): Promise<string | undefined>;
  setMeta(key: string, value: string): Promise<void>;
}

/** What a repository needs of the store's database: its statements (a transaction's inside one), object ids, partitions and the engine's SQL. */
export interface StoreConnection {
  /** what differs between the engines, asked of the engine (engine/types.ts) */
  readonly engine: SqlEngine;
  sql(): SqlQueries;
  idOf(key: ObjectKey): Promise<number>;
  knownIdOf(key: ObjectKey): Promise<number | undefined>;
  ensureDays(tables: readonly PartitionedTable[], ...timesMs: number[]): Promise<void>;
  /** run if the current transaction rolls back: what memory learnt inside it is forgotten */
  onRollback(forget: () => void): void;
  transaction<T>(work: () => Promise<T>): Promise<T>;
  /** a row inserted with the current transaction's next statement (or its commit), with the others waiting */
  insertLater(head: string, row: SqlValue[], tail?: string, replaces?: string): void;
  /** one row, waiting for the current transaction's next statement (`insertLater`), or at once outside one */
  insertRow(head: string, row: SqlValue[], tail?: string, replaces?: string): Promise<void>;
  /** the id of a write row inserted in the current transaction: each is given its own, on either engine */
  nextWriteId(): Promise<number>;
  /** a value kept for the current transaction's length (made by `init` on first use); undefined outside one */
  transactionValue<T>(owner: object, init: () => T): T | undefined;
}

/** One completed write request as the audit repository keeps it (audit ingest reads them from logs); its cluster is the store's to add. */
export interface RequestRecord extends Omit<AuditRow, "cluster" | "noop"> {
  /** auditID/stage: the same request delivered twice (a re-read file, a retried webhook batch) is one request */
  key: string;
  /** stageTimestamp − requestReceivedTimestamp; null when either is missing */
  latencyMs: number | null;
  /** when it completed, in microseconds: one object's writes in the order they took effect (tsMs × 1000 when not known) */
  orderUs?: number;
  /** the version the client sent with it (objectRef.resourceVersion), when it sent one */
  precondition?: string;
}
