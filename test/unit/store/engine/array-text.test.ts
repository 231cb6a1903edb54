/** Array texts as a real PostgreSQL server reads them back: every value the same, whichever way the text was written. */
import { describe, expect, it } from "vitest";
import { arrayText } from "@/lib/store/engine/insert-rows";
import { storeEngines } from "../../../helpers/store-engines";

const postgres = storeEngines().find(([name]) => name === "PostgreSQL")![1];

const TEXTS = [
  "plain",
  "",
  "NULL",
  "null",
  'say "hi"',
  "back\\slash",
  "ends with \\",
  '\\"',
  "{braces}, commas",
  "  spaces  ",
  "line\nbreak",
  "tab\tand\rreturn",
  "bell\u0007",
  "ünïcødé ✓ 🚀",
  '{"path":"spec.renewTime","after":"2026-01-01T00:00:00Z"}',
];

describe("arrayText on PostgreSQL", () => {
  it("gives back each text as it was, alone and among others that need JSON's own escapes", async () => {
    const sql = await postgres.bare();
    const plain = TEXTS.filter((text) => ![...text].some((c) => c < " "));
    for (const values of [plain, TEXTS, [null, ...plain, null], TEXTS.map((text, i) => (i % 3 ? text : null))]) {
      const row = await sql.get<{ a: (string | null)[] }>("SELECT CAST(? AS text[]) AS a", [arrayText(values)]);
      expect(row!.a).toEqual(values);
    }
    // Each alone, as its own one-item array.
    for (const text of TEXTS) expect((await sql.get<{ a: string[] }>("SELECT CAST(? AS text[]) AS a", [arrayText([text])]))!.a).toEqual([text]);
  });

  it("gives back numbers, NULLs and numbers JSON cannot write", async () => {
    const sql = await postgres.bare();
    const numbers = [0, -1, 1.5, 1_700_000_000_123, -0.25, null, 2 ** 53 - 1];
    expect((await sql.get<{ a: (number | null)[] }>("SELECT CAST(? AS double precision[]) AS a", [arrayText(numbers)]))!.a).toEqual(numbers);
    const odd = [1, Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY, null];
    expect((await sql.get<{ a: (number | null)[] }>("SELECT CAST(? AS double precision[]) AS a", [arrayText(odd)]))!.a).toEqual(odd);
    expect((await sql.get<{ a: unknown[] }>("SELECT CAST(? AS bigint[]) AS a", [arrayText([])]))!.a).toEqual([]);
  });
});
