import { describe, expect, it } from "vitest";
import { alignToStep, chooseStepSeconds, PROMETHEUS_MAX_POINTS, rateWindowSeconds } from "@/lib/time/step";

const H = 3_600_000;

describe("step choice", () => {
  it("never goes below the scrape interval", () => {
    expect(chooseStepSeconds({ startMs: 0, endMs: H, minStepSeconds: 30, maxPoints: 2000 })).toBe(30);
  });
  it("follows the chart width, rounded up to a readable step", () => {
    // 48 h over 1000 px = 172.8 s → 300 s
    expect(chooseStepSeconds({ startMs: 0, endMs: 48 * H, minStepSeconds: 15, maxPoints: 1000 })).toBe(300);
  });
  it("keeps every range under Prometheus's 11,000-point limit, even for huge widths and ranges", () => {
    for (const days of [1, 30, 400]) {
      for (const maxPoints of [100, 1000, 50_000]) {
        const endMs = days * 24 * H + 12_345;
        const step = chooseStepSeconds({ startMs: 12_345, endMs, minStepSeconds: 1, maxPoints });
        const aligned = alignToStep(12_345, endMs, step);
        expect((aligned.endSeconds - aligned.startSeconds) / step).toBeLessThanOrEqual(PROMETHEUS_MAX_POINTS);
      }
    }
  });
  it("honours a requested step only when it is not finer than the limits", () => {
    expect(chooseStepSeconds({ startMs: 0, endMs: H, minStepSeconds: 15, maxPoints: 1000, requestedStepSeconds: 60 })).toBe(60);
    expect(chooseStepSeconds({ startMs: 0, endMs: H, minStepSeconds: 15, maxPoints: 1000, requestedStepSeconds: 1 })).toBe(15);
  });
  it("aligns both ends outward to multiples of the step", () => {
    expect(alignToStep(1_000_123, 1_999_999, 60)).toEqual({ startSeconds: 960, endSeconds: 2040, stepSeconds: 60 });
    expect(alignToStep(1_020_000, 1_980_000, 60)).toEqual({ startSeconds: 1020, endSeconds: 1980, stepSeconds: 60 });
  });
  it("uses a rate window of at least four scrapes and one step", () => {
    expect(rateWindowSeconds(15, 15)).toBe(60);
    expect(rateWindowSeconds(300, 15)).toBe(300);
  });
});
