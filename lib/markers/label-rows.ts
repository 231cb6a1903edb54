/**
 * Where marker labels go on a chart: each in the top row where it overlaps no label already placed,
 * so a release, a detected onset and a rollback minutes apart stay readable rather than printed over
 * one another. Labels are placed from left to right. When every row is taken, the label goes where it
 * overlaps least; its line and hover text still say what it is.
 */
export interface LabelSpan {
  /** the marker line's x, in pixels */
  x: number;
  /** the label's drawn width, in pixels */
  width: number;
  /** drawn left of its line (near the right edge) rather than right of it */
  leftward: boolean;
}

/** Space between a line and its label, and the least space kept between two labels in a row. */
export const LABEL_OFFSET = 3;
const LABEL_GAP = 4;

/** The row (0 = top) of each label, in the order given. */
export function labelRows(spans: LabelSpan[], rows: number): number[] {
  const extents = spans.map((s) => (s.leftward ? [s.x - LABEL_OFFSET - s.width, s.x - LABEL_OFFSET] : [s.x + LABEL_OFFSET, s.x + LABEL_OFFSET + s.width]));
  const taken: [number, number][][] = Array.from({ length: Math.max(1, rows) }, () => []);
  const placed = new Array<number>(spans.length).fill(0);
  const order = spans.map((_, i) => i).sort((a, b) => extents[a][0] - extents[b][0]);
  for (const i of order) {
    const [start, end] = extents[i];
    const overlap = (row: [number, number][]) =>
      row.reduce((sum, [s, e]) => sum + Math.max(0, Math.min(end + LABEL_GAP, e + LABEL_GAP) - Math.max(start, s)), 0);
    const costs = taken.map(overlap);
    const free = costs.indexOf(0);
    const row = free !== -1 ? free : costs.indexOf(Math.min(...costs));
    taken[row].push([start, end]);
    placed[i] = row;
  }
  return placed;
}
