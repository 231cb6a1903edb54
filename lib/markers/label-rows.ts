/**
 * Where marker labels go on a chart. A label is drawn beside its own line and never across another
 * marker's line, where it would read as that line's: right of its line if it fits before the next
 * one, else left if it fits there, else cut to the wider side's room. Then each goes in the top row
 * where it overlaps no label already placed, so a release, a detected onset and a rollback minutes
 * apart stay readable rather than printed over one another. When every row is taken, the label goes
 * where it overlaps least; its line and hover text still say what it is.
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

export interface LabelPlacement {
  row: number;
  leftward: boolean;
  /** the width the label may be drawn at: its own, or less when it must be cut to stay off other lines */
  width: number;
}

/**
 * Each label's side, drawn width and row. `spans` give each line's x and its label's full width;
 * `bounds` is the plot's horizontal extent.
 */
export function placeLabels(spans: { x: number; width: number }[], bounds: { left: number; right: number }, rows: number): LabelPlacement[] {
  const xs = spans.map((s) => s.x);
  const sided = spans.map(({ x, width }) => {
    // Another line at the same x is the same place in time: the labels share it, in rows.
    const next = Math.min(bounds.right, ...xs.filter((other) => other > x + 0.5));
    const previous = Math.max(bounds.left, ...xs.filter((other) => other < x - 0.5));
    const rightRoom = next - x - LABEL_OFFSET - LABEL_GAP;
    const leftRoom = x - previous - LABEL_OFFSET - LABEL_GAP;
    if (width <= rightRoom) return { x, width, leftward: false };
    if (width <= leftRoom) return { x, width, leftward: true };
    return leftRoom > rightRoom ? { x, width: Math.max(0, leftRoom), leftward: true } : { x, width: Math.max(0, rightRoom), leftward: false };
  });
  const placed = labelRows(sided, rows);
  return sided.map((s, i) => ({ row: placed[i], leftward: s.leftward, width: s.width }));
}
