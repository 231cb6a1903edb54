/**
 * `?` placeholders as PostgreSQL's `$1, $2, …`, leaving alone a `?` inside a string literal, a quoted identifier
 * or a comment. The store's SQL is written once, with `?`, for both engines.
 */
export function numberedPlaceholders(sql: string): string {
  let out = "";
  let n = 0;
  for (let i = 0; i < sql.length; i++) {
    const c = sql[i];
    if (c === "'" || c === '"') {
      // a quoted run, its doubled quotes included, up to its closing quote
      const end = closing(sql, i, c);
      out += sql.slice(i, end);
      i = end - 1;
    } else if (c === "-" && sql[i + 1] === "-") {
      const end = sql.indexOf("\n", i);
      const stop = end === -1 ? sql.length : end;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (c === "/" && sql[i + 1] === "*") {
      const end = sql.indexOf("*/", i + 2);
      const stop = end === -1 ? sql.length : end + 2;
      out += sql.slice(i, stop);
      i = stop - 1;
    } else if (c === "?") out += `$${++n}`;
    else out += c;
  }
  return out;
}

function closing(sql: string, from: number, quote: string): number {
  for (let i = from + 1; i < sql.length; i++) {
    if (sql[i] !== quote) continue;
    if (sql[i + 1] === quote) i++;
    else return i + 1;
  }
  return sql.length;
}
