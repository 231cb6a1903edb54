/** The store's record types, shared by the write store and the audit repository. */
import type Database from "better-sqlite3";
import type { ObjectKey } from "../wire/objects";

/** What a repository needs of the store's connection: its prepared statements and object ids. */
export interface StoreConnection {
  statement(sql: string): Database.Statement;
  idOf(key: ObjectKey): number;
}
