/** The compare table from the compare answer: one row per window with both counts and A ÷ B. */
import type { PanelData } from "../panels/run-panel";

export interface CompareRow {
  startMs: number;
  endMs: number;
  a: number | null;
  b: number | null;
  /** A ÷ B; null when either is missing or B is 0 */
  ratio: number | null;
}

const ratioOf = (a: number | null, b: number | null) => (a === null || b === null || b === 0 ? null : a / b);

export function compareRows(data: PanelData): { rows: CompareRow[]; total: CompareRow } {
  const side = (name: string) => data.series.find((s) => s.labels.series === name)?.points ?? [];
  const a = side("A");
  const bByTime = new Map(side("B"));
  const windowMs = data.stepSeconds * 1000;
  const rows = a.map(([endMs, va]) => {
    const vb = bByTime.get(endMs) ?? null;
    return { startMs: endMs - windowMs, endMs, a: va, b: vb, ratio: ratioOf(va, vb) };
  });
  const sum = (key: "a" | "b") => {
    const values = rows.map((r) => r[key]).filter((v): v is number => v !== null);
    return values.length ? values.reduce((x, y) => x + y, 0) : null;
  };
  const total = { startMs: data.startMs, endMs: data.endMs, a: sum("a"), b: sum("b"), ratio: ratioOf(sum("a"), sum("b")) };
  return { rows, total };
}
