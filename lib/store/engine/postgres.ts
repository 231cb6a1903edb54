/**
 * The engine contract on a PostgreSQL pool (node-postgres). Every statement is parameterised; a transaction runs
 * on one pooled connection. 64-bit integers (ids, epoch milliseconds, counts) come back as numbers, as SQLite's do;
 * one past 2^53 is an error, never a rounded number.
 */
import pg from "pg";
import { numberedPlaceholders } from "./placeholders";
import { arrayText, COLUMN_TYPES_SQL, columnTypesOf, insertTogether, type ColumnTypes } from "./insert-rows";
import { dropBefore, type PartitionedTable } from "./partitions";
import type { InsertGroup, SqlArrayType, SqlEngine, SqlQueries, SqlValue } from "./types";

export interface PostgresSettings {
  url: string;
  poolSize: number;
  /** disable: plain TCP; require: TLS, any certificate; verify-full: TLS, the server's certificate checked against `ca` (or the system's roots) */
  tls: { mode: "disable" | "require" | "verify-full"; ca?: string };
  connectTimeoutMs: number;
  /** a statement past this is cancelled by the server */
  statementTimeoutMs: number;
}

const INT8 = 20;
const NUMERIC = 1700;

function exactNumber(text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) && Number.isInteger(value)) throw new RangeError(`the database answered ${text}, past what a number holds exactly`);
  return value;
}

const types = {
  getTypeParser(oid: number, format?: "text" | "binary") {
    if (oid === INT8 || oid === NUMERIC) return exactNumber;
    return pg.types.getTypeParser(oid, format ?? "text");
  },
} as pg.CustomTypesConfig;

export function poolConfig(settings: PostgresSettings): pg.PoolConfig {
  return {
    connectionString: settings.url,
    max: settings.poolSize,
    connectionTimeoutMillis: settings.connectTimeoutMs,
    statement_timeout: settings.statementTimeoutMs,
    application_name: "churnscope",
    // No JIT: the dashboard's statements are short, and compiling the Objects ranking's sums took 85 ms where running
    // them took 40 (at 10 M writes). An `options` in the URL takes precedence.
    options: "-c jit=off",
    types,
    ssl: settings.tls.mode === "disable" ? false : { rejectUnauthorized: settings.tls.mode === "verify-full", ca: settings.tls.ca },
  };
}

/**
 * Each statement as a named prepared statement: the server parses and plans a text once per connection, not at every
 * call (the recorder runs the same few statements thousands of times a second). Texts are named in the order first seen.
 */
const named = new Map<string, { name: string; text: string }>();
function statement(sql: string, params: readonly SqlValue[]): pg.QueryConfig {
  let known = named.get(sql);
  if (!known) {
    known = { name: `s${named.size}`, text: numberedPlaceholders(sql) };
    // A text built with values in it (an IN list of ids, say) would grow the map and every connection's statements.
    if (named.size < 2_000 && params.length > 0) named.set(sql, known);
    else return { text: known.text, values: params as SqlValue[] };
  }
  return { name: known.name, text: known.text, values: params as SqlValue[] };
}

const queriesOn = (client: pg.Pool | pg.PoolClient): SqlQueries => ({
  all: async <T>(sql: string, params: readonly SqlValue[] = []) => (await client.query(statement(sql, params))).rows as T[],
  get: async <T>(sql: string, params: readonly SqlValue[] = []) => (await client.query(statement(sql, params))).rows[0] as T | undefined,
  run: async (sql: string, params: readonly SqlValue[] = []) => ({ changes: (await client.query(statement(sql, params))).rowCount ?? 0 }),
  exec: async (sql: string) => void (await client.query(sql)),
});

export class PostgresEngine implements SqlEngine {
  readonly sharedByReplicas = true;
  readonly partitioned = true;
  readonly forShare = " FOR SHARE";
  readonly sequences = true;
  readonly lateralJoins = true;
  /** The column types of the store's tables, read once they are made: how rows waiting to be inserted go in. */
  private columnTypes?: ColumnTypes;
  readonly pool: pg.Pool;
  private readonly direct: SqlQueries;

  constructor(settings: PostgresSettings) {
    // A client that dies while idle in the pool (the server restarted) is an event, not a crash of the process.
    this.pool = new pg.Pool(poolConfig(settings));
    this.pool.on("error", () => undefined);
    this.direct = queriesOn(this.pool);
  }

  all<T>(sql: string, params?: readonly SqlValue[]): Promise<T[]> {
    return this.direct.all<T>(sql, params);
  }

  get<T>(sql: string, params?: readonly SqlValue[]): Promise<T | undefined> {
    return this.direct.get<T>(sql, params);
  }

  run(sql: string, params?: readonly SqlValue[]): Promise<{ changes: number }> {
    return this.direct.run(sql, params);
  }

  exec(sql: string): Promise<void> {
    return this.direct.exec(sql);
  }

  async transaction<T>(work: (tx: SqlQueries) => Promise<T>, opening?: string): Promise<T> {
    const client = await this.pool.connect();
    let broken: Error | undefined;
    // The server can end the connection while this process works between two statements (a restart, a terminated
    // backend): with no statement in flight, the error is the connection's own, and unheard it would end the process.
    // Heard here, the transaction's next statement fails with the reason and the connection is not reused.
    const ended = (error: Error) => (broken = error);
    client.on("error", ended);
    try {
      await client.query(opening ? `BEGIN; ${opening}` : "BEGIN");
      const result = await work(queriesOn(client));
      await client.query("COMMIT");
      return result;
    } catch (error) {
      await client.query("ROLLBACK").catch((rollback: Error) => (broken = rollback));
      throw error;
    } finally {
      // A connection that ended, or whose rollback failed, is not given to the next caller.
      client.removeListener("error", ended);
      client.release(broken);
    }
  }

  async ping(): Promise<string> {
    await this.direct.get("SELECT 1 AS up");
    return "open (postgres)";
  }

  async sizeBytes(): Promise<number> {
    return (await this.direct.get<{ n: number }>("SELECT pg_database_size(current_database()) AS n"))!.n;
  }

  async lockUntilCommit(tx: SqlQueries, key: number): Promise<void> {
    await tx.get("SELECT pg_advisory_xact_lock(?)", [key]);
  }

  least(a: string, b: string): string {
    return `LEAST(${a}, ${b})`;
  }

  /** PostgreSQL plans these reads itself. */
  indexedBy(): string {
    return "";
  }

  /** 64-bit integers (hours times an hour's milliseconds overflow 32 bits), and no rowids to leave out. */
  schema(sqlite: string): string {
    return sqlite.replaceAll(" WITHOUT ROWID", "").replaceAll("INTEGER", "BIGINT");
  }

  including(columns: string): string {
    return ` INCLUDE (${columns})`;
  }

  /** Every table's rows in one statement: one round trip. */
  async insertWaiting(tx: SqlQueries, groups: readonly InsertGroup[]): Promise<void> {
    // Read in the transaction: a pool of one connection has no other to read them on.
    this.columnTypes ??= columnTypesOf(await tx.all(COLUMN_TYPES_SQL));
    await insertTogether(tx, groups, this.columnTypes);
  }

  /** Whole days dropped, the rows of the day `beforeMs` falls in deleted. */
  removeBefore(tx: SqlQueries, table: string, beforeMs: number): Promise<number> {
    return dropBefore(tx, table as PartitionedTable, beforeMs, new Set());
  }

  /** An array as one parameter (arrayText). */
  inList(expr: string, type: SqlArrayType, values: readonly (string | number)[]): { sql: string; param: SqlValue } {
    return { sql: `${expr} = ANY(CAST(? AS ${type}[]))`, param: arrayText(values) };
  }

  /** An array per column, unnested side by side. */
  rowsTable(alias: string, columns: readonly (readonly [string, SqlArrayType])[], rows: readonly (readonly (string | number | null)[])[]) {
    const arrays = columns.map(([, type]) => `CAST(? AS ${type}[])`).join(", ");
    return {
      sql: `unnest(${arrays}) AS ${alias}(${columns.map(([name]) => name).join(", ")})`,
      params: columns.map((_, i) => arrayText(rows.map((row) => row[i]))),
    };
  }

  /** SET LOCAL statements, run as the transaction begins. */
  plannerSettings(settings: string): string {
    return settings;
  }

  async analyze(tables: readonly string[]): Promise<void> {
    // And the vacuum marks their pages all visible, so reads of an index that carries what they need read it alone.
    await this.direct.exec(`VACUUM (ANALYZE) ${tables.join(", ")}`);
  }

  close(): Promise<void> {
    return this.pool.end();
  }
}
