import { formatUtc } from "@/lib/format/time";
import { describe, expect, it } from "vitest";
import { formatDurationMs, parseDurationMs, promDuration } from "@/lib/time/duration";
import { formatTimeExpr, freezeRange, parseRangeParams, parseTimeExpr, previousRange, resolveRange } from "@/lib/time/range";

describe("durations", () => {
  it("parses single and compound units", () => {
    expect(parseDurationMs("90s")).toBe(90_000);
    expect(parseDurationMs("1h30m")).toBe(5_400_000);
    expect(parseDurationMs("2d")).toBe(172_800_000);
    expect(parseDurationMs("500ms")).toBe(500);
  });
  it("rejects what is not a duration", () => {
    for (const bad of ["", "6", "h", "6H", "-1h", "1.5h", "6h ", "1h-", "0s"]) expect(parseDurationMs(bad)).toBeNull();
  });
  it("formats exactly and round-trips", () => {
    expect(formatDurationMs(5_400_000)).toBe("1h30m");
    expect(formatDurationMs(604_800_000 + 3_600_000)).toBe("1w1h");
    for (const text of ["15m", "6h", "1d2h", "45s"]) expect(formatDurationMs(parseDurationMs(text)!)).toBe(text);
    expect(promDuration(21600)).toBe("21600s");
  });
});

describe("time expressions (Grafana-compatible from/to)", () => {
  it("accepts now, now-<duration>, epoch ms and RFC 3339", () => {
    expect(parseTimeExpr("now")).toEqual({ ok: true, value: { kind: "relative", agoMs: 0 } });
    expect(parseTimeExpr("now-6h")).toEqual({ ok: true, value: { kind: "relative", agoMs: 21_600_000 } });
    expect(parseTimeExpr("1789132320000")).toEqual({ ok: true, value: { kind: "absolute", ms: 1_789_132_320_000 } });
    expect(parseTimeExpr("2026-09-11T13:12:00Z")).toEqual({ ok: true, value: { kind: "absolute", ms: Date.UTC(2026, 8, 11, 13, 12) } });
    expect(parseTimeExpr("2026-09-11T15:12:00+02:00")).toEqual({ ok: true, value: { kind: "absolute", ms: Date.UTC(2026, 8, 11, 13, 12) } });
  });
  it("reads back a time as every page prints it", () => {
    const ms = Date.UTC(2026, 8, 11, 13, 12);
    expect(parseTimeExpr(formatUtc(ms, false))).toEqual({ ok: true, value: { kind: "absolute", ms } });
    expect(parseTimeExpr(formatUtc(ms + 7_000))).toEqual({ ok: true, value: { kind: "absolute", ms: ms + 7_000 } });
    expect(parseTimeExpr("2026-09-11 13:12").ok).toBe(false); // no zone: refused rather than read in the browser's
  });
  it("rejects seconds-precision epochs, garbage and injection with a message", () => {
    for (const bad of ["1789132320", "now-", "now+1h", "yesterday", '"}) or vector(1)', "2026-13-45T99:00:00Z", "now-6x"]) {
      const result = parseTimeExpr(bad);
      expect(result.ok).toBe(false);
      if (!result.ok) expect(result.error.length).toBeGreaterThan(10);
    }
  });
  it("serialises relative and absolute ends so links round-trip", () => {
    for (const text of ["now", "now-6h", "now-1d12h", "1789132320000"]) {
      const parsed = parseTimeExpr(text);
      expect(parsed.ok && formatTimeExpr(parsed.value)).toBe(text);
    }
  });
  it("resolves against now, freezes for sharing, and computes the previous window", () => {
    const range = { from: { kind: "relative", agoMs: 3_600_000 }, to: { kind: "relative", agoMs: 0 } } as const;
    expect(resolveRange(range, 10_000_000)).toEqual({ startMs: 6_400_000, endMs: 10_000_000 });
    expect(freezeRange(range, 10_000_000)).toEqual({ from: { kind: "absolute", ms: 6_400_000 }, to: { kind: "absolute", ms: 10_000_000 } });
    expect(previousRange({ startMs: 100, endMs: 160 })).toEqual({ startMs: 40, endMs: 100 });
  });
  it("falls back to the default range with reasons for bad URL values", () => {
    expect(parseRangeParams("now-1h", "now").errors).toEqual([]);
    const bad = parseRangeParams("tomorrow", "now");
    expect(bad.errors[0]).toMatch(/^from: /);
    expect(formatTimeExpr(bad.range.from)).toBe("now-6h");
    expect(parseRangeParams("now", "now-1h").errors[0]).toMatch(/later/);
    expect(parseRangeParams("1789126200000", "1789122600000").errors[0]).toMatch(/later/);
  });
  it("accepts an absolute start with a relative end, as alert links for firing alerts have", () => {
    const mixed = parseRangeParams("1789122600000", "now");
    expect(mixed.errors).toEqual([]);
    expect(resolveRange(mixed.range, 1789126200000)).toEqual({ startMs: 1789122600000, endMs: 1789126200000 });
  });
});
