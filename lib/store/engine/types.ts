/**
 * The store's engine contract: what its repositories need of a database, the same on SQLite and PostgreSQL. SQL
 * is written once with `?` placeholders (PostgreSQL's engine numbers them); where the engines' SQL differs, the
 * repository asks `dialect`, and that SQL stays in the store folder.
 */
/** A bound value: text, a number, bytes (a BLOB or BYTEA) or NULL. */
export type SqlValue = string | number | Buffer | null;

/** `all` and `get` read what is committed (inside a transaction: its own work too), or answer what a statement that writes returns. */
export interface SqlQueries {
  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]>;
  get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined>;
  /** a statement's rows changed */
  run(sql: string, params?: readonly SqlValue[]): Promise<{ changes: number }>;
  /** statements without parameters, in order (a schema step) */
  exec(sql: string): Promise<void>;
}

export interface SqlEngine extends SqlQueries {
  readonly dialect: "sqlite" | "postgres";
  /**
   * `work` in one transaction, committed when it resolves and rolled back when it throws; one at a time per engine on
   * SQLite. `opening`: statements without parameters run first thing (on PostgreSQL in the same round trip as BEGIN).
   */
  transaction<T>(work: (tx: SqlQueries) => Promise<T>, opening?: string): Promise<T>;
  close(): Promise<void>;
}
