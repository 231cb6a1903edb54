import { describe, expect, it } from "vitest";
import { PromError } from "@/lib/promql/errors";
import { sampleValue, toSeries } from "@/lib/promql/to-series";

describe("wire → domain", () => {
  it("converts matrix samples to epoch ms and numbers, NaN to gaps", () => {
    const series = toSeries({
      resultType: "matrix",
      result: [
        {
          metric: { verb: "PUT" },
          values: [
            [1789132320, "1.5"],
            [1789132335.5, "NaN"],
            [1789132350, "+Inf"],
          ],
        },
      ],
    });
    expect(series).toEqual([
      {
        labels: { verb: "PUT" },
        points: [
          [1789132320000, 1.5],
          [1789132335500, null],
          [1789132350000, Infinity],
        ],
      },
    ]);
  });
  it("converts vectors and scalars", () => {
    expect(toSeries({ resultType: "vector", result: [{ metric: {}, value: [10, "3"] }] })).toEqual([{ labels: {}, points: [[10000, 3]] }]);
    expect(toSeries({ resultType: "scalar", result: [10, "-2"] })).toEqual([{ labels: {}, points: [[10000, -2]] }]);
    expect(sampleValue("-Inf")).toBe(-Infinity);
  });
  it("refuses native histograms with a clear error instead of empty charts", () => {
    expect(() => toSeries({ resultType: "matrix", result: [{ metric: {}, histograms: [[1, {}]] }] })).toThrow(PromError);
  });
});
