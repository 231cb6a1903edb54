/** Rows inserted with as few statements as PostgreSQL's bound on parameters allows (SQLite's is higher). */
import type { SqlQueries, SqlValue } from "./types";

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
