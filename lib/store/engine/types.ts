/**
 * The store's engine contract: what its repositories need of a database, the same on SQLite and PostgreSQL. SQL
 * is written once with `?` placeholders (PostgreSQL's engine numbers them); where the engines differ, the contract has
 * a method or property for it, as Grafana's `Dialect` does, and the repositories do not ask which engine they run on.
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

/** The SQL types of values given many at once (inList, rowsTable). */
export type SqlArrayType = "text" | "bigint" | "integer";

/** One table's rows waiting to be inserted: `head` is `INSERT INTO t (a, b)`, `tail` what follows the values (`ON CONFLICT …`). */
export interface InsertGroup {
  head: string;
  tail: string;
  rows: readonly (readonly SqlValue[])[];
}

export interface SqlEngine extends SqlQueries {
  /** replicas may write this database at once (a server's): they take turns by locks and leases, and share the audit intake */
  readonly sharedByReplicas: boolean;
  /** the tables that grow with every write are split into day partitions, each made before its first row (partitions.ts) */
  readonly partitioned: boolean;
  /** what a read in a transaction appends to keep its rows from changing until the transaction ends (none where one process writes at a time) */
  readonly forShare: string;
  /** ids come from the table's sequence, a block at a time (else a transaction counts on from the highest, its write lock keeping others out) */
  readonly sequences: boolean;
  /** a join can read a subquery per row of the table before it (LATERAL): many objects' newest rows in one statement */
  readonly lateralJoins: boolean;
  /** resolves once the database answers (a server's round trip, a file's at once), with what readiness says of it */
  ping(): Promise<string>;
  /** the database's size on disk, in bytes */
  sizeBytes(): Promise<number>;
  /** a lock on `key` held until `tx` ends, across replicas (where one process writes at a time, there is nothing to take) */
  lockUntilCommit(tx: SqlQueries, key: number): Promise<void>;
  /** SQL: the smaller of two numbers */
  least(a: string, b: string): string;
  /** SQL after a table's name: the index its reads are to use where the planner would pick another; "" where it plans them itself */
  indexedBy(index: string): string;
  /** a schema written for SQLite, as this engine takes it */
  schema(sqlite: string): string;
  /** SQL after an index's columns: `columns` carried in the index for reads that need nothing else; "" where an index cannot */
  including(columns: string): string;
  /** the rows waiting to be inserted in `tx`, in as few statements as this engine stores them fastest (insert-rows.ts) */
  insertWaiting(tx: SqlQueries, groups: readonly InsertGroup[]): Promise<void>;
  /** the rows of `table` before `beforeMs` removed (whole day partitions, where it has them); how many there were */
  removeBefore(tx: SqlQueries, table: string, beforeMs: number): Promise<number>;
  /** SQL: `expr` is one of `values` (of the SQL type `type`: text, bigint, integer), given as one parameter, `param` */
  inList(expr: string, type: SqlArrayType, values: readonly (string | number)[]): { sql: string; param: SqlValue };
  /**
   * SQL for a table of `rows` named `alias`, with these columns of these SQL types, to join or update from, and its
   * parameters: a burst's many rows in one statement where a statement each would cost a round trip or more.
   */
  rowsTable(
    alias: string,
    columns: readonly (readonly [name: string, type: SqlArrayType])[],
    rows: readonly (readonly (string | number | null)[])[],
  ): { sql: string; params: SqlValue[] };
  /** the statement that sets the planner's `settings` for one transaction, or undefined where the planner takes none */
  plannerSettings(settings: string): string | undefined;
  /** after `tables` grew by a day: the planner told how big they are now, where it would learn it much later */
  analyze(tables: readonly string[]): Promise<void>;
  /**
   * `work` in one transaction, committed when it resolves and rolled back when it throws; one at a time per engine on
   * SQLite. `opening`: statements without parameters run first thing (on PostgreSQL in the same round trip as BEGIN).
   */
  transaction<T>(work: (tx: SqlQueries) => Promise<T>, opening?: string): Promise<T>;
  close(): Promise<void>;
}
