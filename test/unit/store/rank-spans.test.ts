import { describe, expect, it } from "vitest";
import { spanReads } from "@/lib/store/rank-spans";

const every = () => true;
const read = (hours: number, first: number, sign: 1 | -1 = 1) => ({ hours, first, last: first + hours - 1, sign });

describe("spanReads", () => {
  it("reads eight aligned days as one span, and a fortnight from an odd day as spans of 1, 2, 4 and 8 days", () => {
    expect(spanReads(192 * 5, 192 * 6 - 1, 1, every)).toEqual([read(192, 960)]);
    // Days 7 … 20: day 7 alone, days 8-15 as eight, 16-19 as four, 20 alone.
    expect(spanReads(7 * 24, 21 * 24 - 1, 1, every)).toEqual([read(24, 168), read(192, 192), read(96, 384), read(24, 480)]);
  });

  it("covers unaligned hours with the largest span that starts at each hour and ends inside, and leaves single hours as runs", () => {
    // 3 | 4-7 | 8-15 | 16-23 | 24-27 | 28-29 | 30
    expect(spanReads(3, 30, -1, every)).toEqual([
      read(1, 3, -1),
      read(4, 4, -1),
      read(8, 8, -1),
      read(8, 16, -1),
      read(4, 24, -1),
      read(2, 28, -1),
      read(1, 30, -1),
    ]);
  });

  it("uses only spans that are built: others are read as the spans or hours below them", () => {
    expect(spanReads(0, 11, 1, () => false)).toEqual([{ hours: 1, first: 0, last: 11, sign: 1 }]);
    // Days 0-1 (48 hours) not built as a pair: each day; the 8-hour spans of day 2 not built: its 4-hour ones.
    const built = (hours: number, first: number) => !(hours === 48 && first === 0) && !(hours === 8 && first >= 48 && first < 72);
    expect(spanReads(0, 59, 1, built)).toEqual([read(24, 0), read(24, 24), read(4, 48), read(4, 52), read(4, 56)]);
  });
});
