import { describe, expect, it } from "vitest";
import { LABEL_OFFSET, labelRows, type LabelSpan } from "@/lib/markers/label-rows";

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
