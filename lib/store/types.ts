/** The store's record types, shared by the write store and the audit repository. */
import type Database from "better-sqlite3";
import type { ObjectKey } from "../wire/objects";

/** What a repository needs of the store's connection: its prepared statements and object ids. */
export interface StoreConnection {
  statement(sql: string): Database.Statement;
  idOf(key: ObjectKey): number;
}

/** One completed write request as the audit repository keeps it (audit ingest reads them from logs). */
export interface RequestRecord {
  /** auditID/stage: the same request delivered twice (a re-read file, a retried webhook batch) is one request */
  key: string;
  tsMs: number;
  verb: string;
  group: string;
  resource: string;
  subresource: string;
  namespace: string;
  name: string;
  user: string;
  userAgent: string;
  /** HTTP status; 0 when the log has none */
  code: number;
  /** stageTimestamp − requestReceivedTimestamp; null when either is missing */
  latencyMs: number | null;
}
