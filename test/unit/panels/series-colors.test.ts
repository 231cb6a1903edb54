import { describe, expect, it } from "vitest";
import { SERIES_COLORS, SeriesColors } from "@/lib/panels/series-colors";

describe("a colour per series name", () => {
  it("gives a name the same colour every time, whatever was asked in between", () => {
    const colors = new SeriesColors();
    const first = colors.colorOf("connectors.networking.datumapis.com");
    for (const other of ["leases.coordination.k8s.io", "PUT", "other name"]) colors.colorOf(other);
    expect(colors.colorOf("connectors.networking.datumapis.com")).toBe(first);
  });
  it("gives distinct names distinct colours until every colour is taken", () => {
    const colors = new SeriesColors();
    const names = Array.from({ length: SERIES_COLORS.length }, (_, i) => `resource-${i}.example.com`);
    expect(new Set(names.map((n) => colors.colorOf(n))).size).toBe(SERIES_COLORS.length);
    // One more name must share; it still gets a colour of the palette.
    expect(SERIES_COLORS).toContain(colors.colorOf("one-more.example.com"));
  });
  it("gives a name its own preferred colour in a fresh tab, whichever names came first, unless that colour is held", () => {
    const alone = new SeriesColors().colorOf("connectors.networking.datumapis.com");
    const later = new SeriesColors();
    later.colorOf("zzz");
    const held = later.colorOf("zzz") === alone;
    expect(later.colorOf("connectors.networking.datumapis.com") === alone).toBe(!held);
  });
  it("never draws two series of one chart alike while the palette has colours left, even after many names", () => {
    const colors = new SeriesColors();
    for (let i = 0; i < 50; i++) colors.colorOf(`seen before ${i}`);
    const chart = Array.from({ length: SERIES_COLORS.length }, (_, i) => `p${i % 3} · edge-${i}`);
    expect(new Set(colors.colorsOf(chart)).size).toBe(SERIES_COLORS.length);
    // Where a name's own colour is free in the chart, it keeps it.
    const fresh = new SeriesColors();
    expect(fresh.colorsOf(["a", "b"])[0]).toBe(fresh.colorOf("a"));
  });
  it("where two series of a chart share a colour, the name given it first keeps it on every chart, whatever their order", () => {
    const colors = new SeriesColors();
    const names = Array.from({ length: 60 }, (_, i) => `client-${i}`);
    for (const name of names) colors.colorOf(name);
    // Pairs of names the palette made share a colour: the earlier one seen is the one each chart keeps it for.
    const pairs = names.flatMap((a, i) =>
      names
        .slice(i + 1)
        .filter((b) => colors.colorOf(b) === colors.colorOf(a))
        .map((b) => [a, b] as const),
    );
    expect(pairs.length).toBeGreaterThan(0);
    for (const [a, b] of pairs) {
      expect(colors.colorsOf([a, b])[0]).toBe(colors.colorOf(a));
      expect(colors.colorsOf([b, a])[1]).toBe(colors.colorOf(a));
      expect(new Set(colors.colorsOf([b, a])).size).toBe(2);
    }
  });
});
