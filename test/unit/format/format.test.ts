import { describe, expect, it } from "vitest";
import { formatChange, formatCount, formatTick, formatValue } from "@/lib/format/number";
import { formatRange, formatUtc, timeTicks } from "@/lib/format/time";

describe("formatting", () => {
  it("keeps small rates readable and counts whole", () => {
    expect(formatValue(0.000347, "writes/s")).toBe("0.000347 writes/s");
    expect(formatValue(12.3456, "writes/s")).toBe("12.35 writes/s");
    expect(formatValue(null, "writes/s")).toBe("no data");
    expect(formatValue(1234.4, "writes")).toBe("1,234 writes");
    expect(formatCount(1234)).toBe("1,234");
    expect(formatCount(1234.56)).toBe("1,234.6");
    expect(formatChange(753, 61)).toBe("×12.3");
    expect(formatChange(5, 0)).toBe("new");
    expect(formatTick(12_000)).toBe("12k");
  });
  it("shows UTC times and ranges", () => {
    expect(formatUtc(Date.UTC(2026, 8, 11, 13, 12, 5))).toBe("2026-09-11 13:12:05Z");
    expect(formatRange(Date.UTC(2026, 8, 11, 12), Date.UTC(2026, 8, 11, 16))).toBe("2026-09-11 12:00Z → 16:00Z");
  });
  it("puts axis ticks on round times", () => {
    const ticks = timeTicks(Date.UTC(2026, 8, 11, 10, 3), Date.UTC(2026, 8, 11, 16), 8);
    expect(ticks[0]).toBe(Date.UTC(2026, 8, 11, 11));
    expect(ticks.every((t) => t % 3_600_000 === 0)).toBe(true);
    expect(ticks.length).toBeLessThanOrEqual(8);
  });
});
