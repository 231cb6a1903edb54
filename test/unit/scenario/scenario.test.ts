import { describe, expect, it } from "vitest";
import { eventsBetween, sampleCounters, valueAt } from "@/lib/scenario/counters";
import { openMetricsChunks } from "@/lib/scenario/openmetrics";
import { countWithMean, createRng } from "@/lib/scenario/rng";

const grid = { startSeconds: 1_789_100_000, endSeconds: 1_789_100_060, intervalSeconds: 15 };

describe("scenario counters", () => {
  it("is deterministic for a seed", () => {
    const a = createRng(7);
    const b = createRng(7);
    expect(Array.from({ length: 5 }, a)).toEqual(Array.from({ length: 5 }, b));
    expect(Array.from({ length: 5 }, createRng(8))).not.toEqual(Array.from({ length: 5 }, createRng(7)));
  });
  it("averages countWithMean to the mean", () => {
    const rng = createRng(1);
    let sum = 0;
    for (let i = 0; i < 20_000; i++) sum += countWithMean(0.3, rng);
    expect(sum / 20_000).toBeGreaterThan(0.28);
    expect(sum / 20_000).toBeLessThan(0.32);
  });
  it("accumulates increments and answers exact windows", () => {
    const [series] = sampleCounters([{ name: "x_total", labels: {}, increment: (t) => (t - grid.startSeconds) / 15 }], grid, createRng(1));
    expect(Array.from(series.values)).toEqual([0, 1, 3, 6, 10]);
    expect(valueAt(series, grid.startSeconds + 30)).toBe(3);
    expect(eventsBetween(series, grid.startSeconds + 15, grid.endSeconds)).toBe(9);
    expect(() => valueAt(series, grid.startSeconds + 7)).toThrow(/not a scrape time/);
  });
  it("rejects increments that are not whole and non-negative", () => {
    expect(() => sampleCounters([{ name: "x_total", labels: {}, increment: () => 0.5 }], grid, createRng(1))).toThrow(/whole number/);
  });
  it("writes OpenMetrics with one TYPE per family, seconds timestamps and # EOF", () => {
    const series = sampleCounters(
      [
        { name: "b_total", labels: { job: 'x"y' }, increment: () => 1 },
        { name: "a_total", labels: {}, increment: () => 2 },
        { name: "b_total", labels: { job: "z" }, increment: () => 1 },
      ],
      grid,
      createRng(1),
    );
    const text = [...openMetricsChunks(series)].join("");
    expect(text.match(/# TYPE b counter/g)).toHaveLength(1);
    expect(text.indexOf("# TYPE a counter")).toBeLessThan(text.indexOf("# TYPE b counter"));
    expect(text).toContain(`b_total{job="x\\"y"} 4 ${grid.endSeconds}\n`);
    expect(text.endsWith("# EOF\n")).toBe(true);
  });
  it("writes a window's samples only, the windows together holding each sample of the whole once", () => {
    // b's samples every 15 s, a's every 20 s from another start: windows of 25 s cut both between samples and on them.
    const [b] = sampleCounters([{ name: "b_total", labels: { job: "z" }, increment: () => 1 }], grid, createRng(1));
    const [a] = sampleCounters(
      [{ name: "a_total", labels: {}, increment: () => 2 }],
      { ...grid, startSeconds: grid.startSeconds + 5, intervalSeconds: 20 },
      createRng(1),
    );
    const samples = (text: string) => text.split("\n").filter((line) => line !== "" && !line.startsWith("#"));
    const whole = samples([...openMetricsChunks([a, b])].join(""));
    const windows: string[] = [];
    for (let from = grid.startSeconds; from <= grid.endSeconds + 5; from += 25) {
      const text = [...openMetricsChunks([a, b], { fromSeconds: from, toSeconds: from + 25 })].join("");
      expect(text.endsWith("# EOF\n")).toBe(true);
      for (const line of samples(text)) {
        const seconds = Number(line.split(" ").at(-1));
        expect(seconds).toBeGreaterThanOrEqual(from);
        expect(seconds).toBeLessThan(from + 25);
      }
      // A family is typed only where it has samples.
      if (!samples(text).some((line) => line.startsWith("a_total"))) expect(text).not.toContain("# TYPE a counter");
      windows.push(...samples(text));
    }
    const bySeries = (lines: string[]) => [...lines].sort((x, y) => x.localeCompare(y, "en", { numeric: true }));
    expect(bySeries(windows)).toEqual(bySeries(whole));
    expect(whole.length).toBe(a.values.length + b.values.length);
  });
});
