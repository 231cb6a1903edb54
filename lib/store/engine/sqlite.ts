/**
 * The engine contract on a SQLite file (better-sqlite3: each statement runs at once, on this thread), over two
 * connections: one writes, one reads. A transaction holds the writing one while its work awaits: writes and
 * transactions asked for meanwhile wait their turn, so none runs inside another's; reads go to the other one and
 * see what was committed (WAL), as they would beside a PostgreSQL transaction.
 */
import Database from "better-sqlite3";
import { Turns } from "../../runtime/turns";
import { insertEach } from "./insert-rows";
import type { InsertGroup, SqlArrayType, SqlEngine, SqlQueries, SqlValue } from "./types";

export class SqliteEngine implements SqlEngine {
  // One process writes the file at a time (its write lock), so there is nothing to take turns for or lock rows against.
  readonly sharedByReplicas = false;
  readonly partitioned = false;
  readonly forShare = "";
  readonly sequences = false;
  readonly lateralJoins = false;
  readonly db: Database.Database;
  private readonly reader: Database.Database;
  private readonly statements = new Map<string, Database.Statement>();
  private readonly readStatements = new Map<string, Database.Statement>();

  constructor(path: string) {
    this.db = new Database(path);
    this.db.pragma("journal_mode = WAL");
    this.db.pragma("synchronous = NORMAL");
    this.reader = new Database(path, { readonly: true });
  }

  private statement(sql: string, on = this.db, cache = this.statements): Database.Statement {
    let prepared = cache.get(sql);
    if (!prepared) {
      prepared = on.prepare(sql);
      cache.set(sql, prepared);
    }
    return prepared;
  }

  private read(sql: string): Database.Statement {
    return this.statement(sql, this.reader, this.readStatements);
  }

  private readonly direct: SqlQueries = {
    all: async <T>(sql: string, params: readonly SqlValue[] = []) => this.statement(sql).all(...params) as T[],
    get: async <T>(sql: string, params: readonly SqlValue[] = []) => this.statement(sql).get(...params) as T | undefined,
    run: async (sql: string, params: readonly SqlValue[] = []) => ({ changes: this.statement(sql).run(...params).changes }),
    exec: async (sql: string) => void this.db.exec(sql),
  };

  /** each transaction (and each statement asked for while one runs) waits for the one before */
  private readonly turns = new Turns();

  /** A write runs at once when no transaction holds the connection or waits for it. */
  private writes<T>(work: (q: SqlQueries) => Promise<T>): Promise<T> {
    return this.turns.waiting === 0 ? work(this.direct) : this.turns.run(() => work(this.direct));
  }

  /** A statement that writes (an INSERT … RETURNING, say) goes to the writing connection in its turn; a read to the reading one. */
  all<T>(sql: string, params: readonly SqlValue[] = []): Promise<T[]> {
    const read = this.read(sql);
    return read.readonly ? Promise.resolve(read.all(...params) as T[]) : this.writes((q) => q.all<T>(sql, params));
  }

  get<T>(sql: string, params: readonly SqlValue[] = []): Promise<T | undefined> {
    const read = this.read(sql);
    return read.readonly ? Promise.resolve(read.get(...params) as T | undefined) : this.writes((q) => q.get<T>(sql, params));
  }

  run(sql: string, params?: readonly SqlValue[]): Promise<{ changes: number }> {
    return this.writes((q) => q.run(sql, params));
  }

  exec(sql: string): Promise<void> {
    return this.writes((q) => q.exec(sql));
  }

  transaction<T>(work: (tx: SqlQueries) => Promise<T>, opening?: string): Promise<T> {
    return this.turns.run(async () => {
      // IMMEDIATE: the write lock first, so that another process's write cannot make this one fail halfway.
      this.db.exec(opening ? `BEGIN IMMEDIATE; ${opening}` : "BEGIN IMMEDIATE");
      try {
        const result = await work(this.direct);
        this.db.exec("COMMIT");
        return result;
      } catch (error) {
        if (this.db.inTransaction) this.db.exec("ROLLBACK");
        throw error;
      }
    });
  }

  async ping(): Promise<string> {
    return "open";
  }

  async sizeBytes(): Promise<number> {
    return (this.db.pragma("page_count", { simple: true }) as number) * (this.db.pragma("page_size", { simple: true }) as number);
  }

  async lockUntilCommit(): Promise<void> {}

  /** SQLite's scalar MIN of two values */
  least(a: string, b: string): string {
    return `MIN(${a}, ${b})`;
  }

  indexedBy(index: string): string {
    return `INDEXED BY ${index}`;
  }

  schema(sqlite: string): string {
    return sqlite;
  }

  including(): string {
    return "";
  }

  /** A statement per row, back to back: in process, so each costs no round trip (half the time of the same rows inserted between the work that made them). */
  insertWaiting(tx: SqlQueries, groups: readonly InsertGroup[]): Promise<void> {
    return insertEach(tx, groups);
  }

  async removeBefore(tx: SqlQueries, table: string, beforeMs: number): Promise<number> {
    return (await tx.run(`DELETE FROM ${table} WHERE ts_ms < ?`, [beforeMs])).changes;
  }

  /** A JSON array as one parameter, read by json_each. */
  inList(expr: string, _type: SqlArrayType, values: readonly (string | number)[]): { sql: string; param: SqlValue } {
    return { sql: `${expr} IN (SELECT value FROM json_each(?))`, param: JSON.stringify(values) };
  }

  /** The rows as one JSON array of arrays, read by json_each. */
  rowsTable(alias: string, columns: readonly (readonly [string, SqlArrayType])[], rows: readonly (readonly (string | number | null)[])[]) {
    const fields = columns.map(([name], i) => `json_extract(value, '$[${i}]') AS ${name}`).join(", ");
    return { sql: `(SELECT ${fields} FROM json_each(?)) AS ${alias}`, params: [JSON.stringify(rows)] };
  }

  plannerSettings(): undefined {
    return undefined;
  }

  async analyze(): Promise<void> {}

  close(): Promise<void> {
    return this.turns.run(async () => {
      this.reader.close();
      this.db.close();
    });
  }
}
