/** Many values as one parameter, as each engine reads them back: a table of rows, and a list to test against. */
import { describe, expect, it } from "vitest";
import { storeEngines } from "../../../helpers/store-engines";

const ROWS: [string, number | null, string | null][] = [
  ['say "hi", {braces}', 1_700_000_000_123, null],
  ["back\\slash", null, "ünïcødé ✓"],
  ["line\nbreak", 0, "NULL"],
  ["", -5, ""],
];

describe.each(storeEngines())("many values on %s", (_name, engine) => {
  it("reads a table of rows back as they were given, in order, NULLs and every text kept", async () => {
    const sql = await engine.bare();
    const table = sql.rowsTable(
      "r",
      [
        ["name", "text"],
        ["ms", "bigint"],
        ["note", "text"],
      ],
      ROWS,
    );
    const rows = await sql.all<{ name: string; ms: number | null; note: string | null }>(
      `SELECT r.name AS name, r.ms AS ms, r.note AS note FROM ${table.sql}`,
      table.params,
    );
    expect(rows.map((r) => [r.name, r.ms === null ? null : Number(r.ms), r.note])).toEqual(ROWS);
  });

  it("tests a value against a list given as one parameter", async () => {
    const sql = await engine.bare();
    await sql.exec("CREATE TABLE t (id BIGINT, name TEXT)");
    for (const [i, [name]] of ROWS.entries()) await sql.run("INSERT INTO t (id, name) VALUES (?, ?)", [i + 1, name]);
    const ids = sql.inList("id", "bigint", [2, 4, 99]);
    expect((await sql.all<{ id: number }>(`SELECT id FROM t WHERE ${ids.sql} ORDER BY id`, [ids.param])).map((r) => Number(r.id))).toEqual([2, 4]);
    const names = sql.inList("name", "text", [ROWS[0][0], "absent"]);
    expect((await sql.all<{ id: number }>(`SELECT id FROM t WHERE ${names.sql}`, [names.param])).map((r) => Number(r.id))).toEqual([1]);
  });
});
