import { describe, expect, it } from "vitest";
import { LABEL_OFFSET, labelRows, placeLabels, type LabelSpan } from "@/lib/markers/label-rows";

const right = (x: number, width = 100): LabelSpan => ({ x, width, leftward: false });
const left = (x: number, width = 100): LabelSpan => ({ x, width, leftward: true });

/** Whether two labels' drawn extents meet, computed apart from the placement code. */
function meet(a: LabelSpan, b: LabelSpan): boolean {
  const extent = (s: LabelSpan) => (s.leftward ? [s.x - LABEL_OFFSET - s.width, s.x - LABEL_OFFSET] : [s.x + LABEL_OFFSET, s.x + LABEL_OFFSET + s.width]);
  const [as, ae] = extent(a);
  const [bs, be] = extent(b);
  return as < be && bs < ae;
}

describe("marker label rows", () => {
  it("keeps labels that do not meet in the top row", () => {
    expect(labelRows([right(0), right(200), left(600)], 4)).toEqual([0, 0, 0]);
  });

  it("puts each label in the top row where it meets no other, whatever order the markers come in", () => {
    // A release, then the onset found a minute later, then two rollouts: given out of time order, as the page
    // collects them (configured markers first, the onset last).
    const spans = [right(100, 110), right(160, 40), right(170, 70), right(130, 90), right(400, 50)];
    const rows = labelRows(spans, 4);
    for (let a = 0; a < spans.length; a++) {
      for (let b = a + 1; b < spans.length; b++)
        if (rows[a] === rows[b]) expect(meet(spans[a], spans[b]), `labels ${a} and ${b} in row ${rows[a]}`).toBe(false);
    }
    expect(rows[4]).toBe(0);
    expect(Math.max(...rows)).toBeLessThan(4);
  });

  it("counts a leftward label's extent left of its line", () => {
    // Drawn left of x = 500 it ends at 497, clear of a label starting at 503 to the right of the same line.
    expect(labelRows([left(500), right(500)], 4)).toEqual([0, 0]);
    expect(labelRows([left(500), right(450)], 4)).toEqual([0, 1]);
  });

  it("shares the row of least overlap once every row is taken", () => {
    const rows = labelRows([right(0), right(10), right(20), right(400)], 2);
    expect(rows.slice(0, 2)).toEqual([0, 1]);
    // The third meets both: the first by 84 px and the second by 94 px, the 4 px gap counted.
    expect(rows[2]).toBe(0);
    expect(rows[3]).toBe(0);
  });
});

describe("marker label placement", () => {
  const bounds = { left: 50, right: 700 };
  /** The drawn extent of a placed label, from its side and width alone. */
  const extent = (x: number, p: { leftward: boolean; width: number }) =>
    p.leftward ? [x - LABEL_OFFSET - p.width, x - LABEL_OFFSET] : [x + LABEL_OFFSET, x + LABEL_OFFSET + p.width];

  it("keeps a label that fits right of its line there, whole", () => {
    expect(placeLabels([{ x: 100, width: 120 }], bounds, 4)).toEqual([{ row: 0, leftward: false, width: 120 }]);
  });

  it("never draws a label across another marker's line: a rollback near the right edge is cut short of the release before it", () => {
    // 14:45Z at x = 500 and 17:00Z at x = 640: the later label has 53 px to its right and 133 px to its left.
    const [release, rollback] = placeLabels(
      [
        { x: 500, width: 60 },
        { x: 640, width: 150 },
      ],
      bounds,
      4,
    );
    expect(release).toMatchObject({ leftward: false, width: 60 });
    expect(rollback.leftward).toBe(true);
    const [start, end] = extent(640, rollback);
    expect(start).toBeGreaterThan(500);
    expect(end).toBeLessThan(640);
  });

  it("keeps every label off every other line and inside the plot, for any markers", () => {
    let seed = 7;
    const random = () => (seed = (seed * 48271) % 2147483647) / 2147483647;
    for (let round = 0; round < 200; round++) {
      const spans = Array.from({ length: 1 + Math.floor(random() * 8) }, () => ({
        x: bounds.left + random() * (bounds.right - bounds.left),
        width: 20 + random() * 200,
      }));
      const placed = placeLabels(spans, bounds, 4);
      placed.forEach((p, i) => {
        const [start, end] = extent(spans[i].x, p);
        expect(p.width).toBeLessThanOrEqual(spans[i].width);
        expect(start).toBeGreaterThanOrEqual(bounds.left - 0.001);
        expect(end).toBeLessThanOrEqual(bounds.right + 0.001);
        for (const other of spans)
          if (Math.abs(other.x - spans[i].x) > 0.5) expect(other.x < start || other.x > end, `line ${other.x} under label ${i} [${start}, ${end}]`).toBe(true);
      });
    }
  });
});
