/** Rows inserted with as few statements as PostgreSQL's bound on parameters allows (SQLite's is higher). */
import type { InsertGroup, SqlQueries, SqlValue } from "./types";

/** PostgreSQL takes at most 65,535 parameters in one statement. */
const MAX_PARAMETERS = 60_000;

/** Statement texts by head, tail, row count and width: a burst's inserts are the same few texts again and again. */
const texts = new Map<string, string>();
const MAX_TEXTS = 4_000;

function textOf(head: string, tail: string, rows: number, width: number): string {
  const key = `${head}\u0000${tail}\u0000${rows}\u0000${width}`;
  let text = texts.get(key);
  if (text === undefined) {
    const row = `(${Array(width).fill("?").join(", ")})`;
    text = `${head} VALUES ${Array(rows).fill(row).join(", ")}${tail}`;
    if (texts.size < MAX_TEXTS) texts.set(key, text);
  }
  return text;
}

/** `head`: `INSERT INTO t (a, b)`; `tail`: what follows the values (`ON CONFLICT …`). Answers the rows changed. */
export async function insertRows(sql: SqlQueries, head: string, rows: readonly (readonly SqlValue[])[], tail = ""): Promise<number> {
  if (rows.length === 0) return 0;
  const width = rows[0].length;
  const per = Math.max(1, Math.floor(MAX_PARAMETERS / width));
  let changes = 0;
  for (let at = 0; at < rows.length; at += per) {
    const part = at === 0 && rows.length <= per ? rows : rows.slice(at, at + per);
    changes += (await sql.run(textOf(head, tail, part.length, width), part.flat())).changes;
  }
  return changes;
}

/** Each table's column types by column, as PostgreSQL spells them (`bigint`, `double precision`): what unnested arrays are cast to. */
export type ColumnTypes = ReadonlyMap<string, ReadonlyMap<string, string>>;

/** The column types of the store's tables (not of their partitions) in the current schema, read once: `columnTypesOf` makes them `ColumnTypes`. */
export const COLUMN_TYPES_SQL = `SELECT c.relname AS "table", a.attname AS "column", format_type(a.atttypid, a.atttypmod) AS type
  FROM pg_attribute a JOIN pg_class c ON c.oid = a.attrelid
  WHERE c.relnamespace = CAST(current_schema() AS regnamespace) AND c.relkind IN ('r', 'p') AND NOT c.relispartition AND a.attnum > 0 AND NOT a.attisdropped`;

export function columnTypesOf(rows: readonly { table: string; column: string; type: string }[]): ColumnTypes {
  const types = new Map<string, Map<string, string>>();
  for (const { table, column, type } of rows) (types.get(table) ?? types.set(table, new Map()).get(table)!).set(column, type);
  return types;
}

/** Rows waiting to go into one table: `head` is `INSERT INTO t (a, b)`, `tail` what follows them (`ON CONFLICT …`). */

/** Each group's rows one statement each, one after another (SQLite: in process, so a statement per row costs no round trip). */
export async function insertEach(sql: SqlQueries, groups: readonly InsertGroup[]): Promise<void> {
  for (const { head, tail, rows } of groups) {
    if (rows.length === 0) continue;
    const text = textOf(head, tail, 1, rows[0].length);
    for (const row of rows) await sql.run(text, row);
  }
}

const HEAD = /^INSERT INTO (\w+) \(([^)]*)\)$/;

/**
 * Several tables' rows in one statement on PostgreSQL (one round trip, where each table's statement was one): each
 * table's rows as one array per column, unnested, so that its text is the same however many rows there are (prepared
 * once per connection), and every table but the last as a data-modifying WITH. Each table once, as two inserts into
 * one table in one statement could meet the same row. A group it cannot take so (a table a second time, a column of
 * no known type, bytes) goes as `insertRows` does it, after.
 */
export async function insertTogether(sql: SqlQueries, groups: readonly InsertGroup[], types: ColumnTypes): Promise<void> {
  const parts: { table: string; text: string; params: string[] }[] = [];
  const rest: InsertGroup[] = [];
  for (const group of groups) {
    const part = unnested(group, types);
    if (part && !parts.some((p) => p.table === part.table)) parts.push(part);
    else rest.push(group);
  }
  if (parts.length > 0) {
    const last = parts.at(-1)!;
    const text =
      parts.length === 1
        ? last.text
        : `WITH ${parts
            .slice(0, -1)
            .map((p, i) => `i${i} AS (${p.text})`)
            .join(", ")} ${last.text}`;
    await sql.run(
      text,
      parts.flatMap((p) => p.params),
    );
  }
  for (const group of rest) await insertRows(sql, group.head, group.rows, group.tail);
}

function unnested({ head, tail, rows }: InsertGroup, types: ColumnTypes): { table: string; text: string; params: string[] } | undefined {
  const match = HEAD.exec(head);
  if (!match) return undefined;
  const [, table, list] = match;
  const columns = list.split(",").map((column) => column.trim());
  const casts = columns.map((column) => types.get(table)?.get(column));
  if (casts.some((type) => type === undefined)) return undefined;
  const params: string[] = [];
  for (let c = 0; c < columns.length; c++) {
    const values: (string | number | null)[] = [];
    for (const row of rows) {
      const value = row[c];
      if (Buffer.isBuffer(value)) return undefined;
      values.push(value);
    }
    params.push(arrayText(values));
  }
  return { table, text: `${head} SELECT * FROM unnest(${casts.map((type) => `CAST(? AS ${type}[])`).join(", ")})${tail}`, params };
}

/** Values as PostgreSQL's array text (`{1,NULL,"text"}`): one parameter for many rows, cast to an array and unnested. */
export function arrayText(values: readonly (string | number | null)[]): string {
  // JSON writes a list as the array text wants it, bar its brackets, when every string needs no escape of JSON's own
  // (PostgreSQL reads a bare `null` as NULL): one native call instead of one per item, most of the cost of a burst's rows.
  const json = JSON.stringify(values);
  if (!JSON_OWN_ESCAPE.test(json) && values.every((value) => typeof value !== "number" || Number.isFinite(value))) return `{${json.slice(1, -1)}}`;
  return `{${values.map(arrayItem).join(",")}}`;
}

/** An escape JSON writes that PostgreSQL's array text would read otherwise: any but `\"` and `\\`. */
const JSON_OWN_ESCAPE = /\\[^"\\]/;

/** Characters JSON writes as escapes of its own, which PostgreSQL's array text would read otherwise. */
// eslint-disable-next-line no-control-regex -- the control characters are what it looks for
const JSON_ESCAPED = /[\u0000-\u001f\ud800-\udfff]/;

/**
 * A value as an item of PostgreSQL's array text: NULL bare, numbers as written, text quoted with `"` and `\` escaped.
 * Without control characters or surrogates, JSON's quoting of a string is exactly that, and a third of the cost.
 */
function arrayItem(value: string | number | null): string {
  if (value === null) return "NULL";
  if (typeof value === "number") return String(value);
  return JSON_ESCAPED.test(value) ? `"${value.replace(/[\\"]/g, "\\$&")}"` : JSON.stringify(value);
}
