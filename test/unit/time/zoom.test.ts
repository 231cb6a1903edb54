import { describe, expect, it } from "vitest";
import { contains, MIN_ZOOM_SPAN_MS, zoomOut, zoomTo } from "@/lib/time/zoom";
import { holdingRange } from "@/lib/snapshot/format/view-range";

const H = 3_600_000;
const T0 = Date.parse("2026-09-11T00:00:00Z");

describe("zooming a time range", () => {
  it("takes a drag in either direction, widened to whole seconds", () => {
    expect(zoomTo(T0 + 2 * H + 400, T0 + H + 1_600)).toEqual({ startMs: T0 + H + 1_000, endMs: T0 + 2 * H + 1_000 });
  });
  it("never zooms narrower than a minute, keeping the selection's middle", () => {
    const r = zoomTo(T0 + 10_000, T0 + 12_000);
    expect(r.endMs - r.startMs).toBe(MIN_ZOOM_SPAN_MS);
    expect((r.startMs + r.endMs) / 2).toBe(T0 + 11_000);
  });
  it("stays inside the bounds it is given: a drag is cut to them, a widened one moved inside", () => {
    const bounds = { startMs: T0, endMs: T0 + 6 * H };
    expect(zoomTo(T0 - 5_000, T0 + 25_000, bounds)).toEqual({ startMs: T0, endMs: T0 + 60_000 });
    expect(zoomTo(T0 + 5 * H, T0 + 9 * H, bounds)).toEqual({ startMs: T0 + 5 * H, endMs: T0 + 6 * H });
    expect(zoomTo(T0 + 6 * H - 1_000, T0 + 7 * H, bounds)).toEqual({ startMs: T0 + 6 * H - 60_000, endMs: T0 + 6 * H });
  });
  it("zooms out to twice the range around its middle, never past now, inside the bounds", () => {
    expect(zoomOut({ startMs: T0 + 2 * H, endMs: T0 + 4 * H })).toEqual({ startMs: T0 + H, endMs: T0 + 5 * H });
    expect(zoomOut({ startMs: T0 + 2 * H, endMs: T0 + 4 * H }, undefined, T0 + 4.5 * H)).toEqual({ startMs: T0 + 0.5 * H, endMs: T0 + 4.5 * H });
    const bounds = { startMs: T0, endMs: T0 + 3 * H };
    expect(zoomOut({ startMs: T0 + 2 * H, endMs: T0 + 3 * H }, bounds)).toEqual({ startMs: T0 + H, endMs: T0 + 3 * H });
    expect(zoomOut({ startMs: T0 + H, endMs: T0 + 3 * H }, bounds)).toEqual(bounds);
  });
  it("knows which range holds another", () => {
    expect(contains({ startMs: T0, endMs: T0 + H }, { startMs: T0, endMs: T0 + H })).toBe(true);
    expect(contains({ startMs: T0, endMs: T0 + H }, { startMs: T0 - 1, endMs: T0 + H })).toBe(false);
  });
});

describe("the held range a snapshot zooms inside", () => {
  const whole = { startMs: T0, endMs: T0 + 48 * H };
  const day = { startMs: T0 + 24 * H, endMs: T0 + 48 * H };
  it("is the shortest held range that contains the zoom", () => {
    expect(holdingRange([whole, day], { startMs: T0 + 30 * H, endMs: T0 + 31 * H })).toEqual(day);
    expect(holdingRange([whole, day], { startMs: T0 + 20 * H, endMs: T0 + 31 * H })).toEqual(whole);
    expect(holdingRange([whole, day], whole)).toEqual(whole);
  });
  it("is none outside every held range, or for a zoom under a minute that is not a held range", () => {
    expect(holdingRange([day], { startMs: T0 + 20 * H, endMs: T0 + 31 * H })).toBeUndefined();
    expect(holdingRange([whole], { startMs: T0 + H, endMs: T0 + H + 30_000 })).toBeUndefined();
  });
});
