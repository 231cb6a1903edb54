/** Rows inserted with as few statements as PostgreSQL's bound on parameters allows (SQLite's is higher). */
import type { SqlQueries, SqlValue } from "./types";

/** PostgreSQL takes at most 65,535 parameters in one statement. */
const MAX_PARAMETERS = 60_000;

/** `head`: `INSERT INTO t (a, b)`; `tail`: what follows the values (`ON CONFLICT …`). Answers the rows changed. */
export async function insertRows(sql: SqlQueries, head: string, rows: readonly (readonly SqlValue[])[], tail = ""): Promise<number> {
  if (rows.length === 0) return 0;
  const per = Math.max(1, Math.floor(MAX_PARAMETERS / rows[0].length));
  const row = `(${Array(rows[0].length).fill("?").join(", ")})`;
  let changes = 0;
  for (let at = 0; at < rows.length; at += per) {
    const part = rows.slice(at, at + per);
    changes += (await sql.run(`${head} VALUES ${Array(part.length).fill(row).join(", ")}${tail}`, part.flat())).changes;
  }
  return changes;
}
