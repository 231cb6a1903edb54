import { describe, expect, it } from "vitest";
import { apart } from "@/lib/panels/color-vision";
import { SERIES_COLORS, SeriesColors } from "@/lib/panels/series-colors";
import { leastDeltaE } from "../../helpers/color-difference";
import { createRng } from "@/lib/scenario/rng";

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

  it("whatever order a page's charts are drawn in, a name drawn beside fewer names than colours shows one colour on all of them, and no chart draws two series alike", () => {
    const random = createRng(41);
    const names = Array.from({ length: 48 }, (_, i) => `apiserver-${i % 4} · resource-${i}.example.com`);
    // Six charts of ten series, each sharing two names with the next: more names than colours between them, and each
    // name drawn beside at most 18 others.
    const charts = Array.from({ length: 6 }, (_, c) => Array.from({ length: 10 }, (_, i) => names[(c * 8 + i) % names.length]));
    let moved = 0;
    for (let order = 0; order < 40; order++) {
      const colors = new SeriesColors();
      const before = colors.snapshot();
      // Names first seen in another order each time, as the page's other answers arrive first or last.
      for (const name of shuffled(names, random)) colors.colorOf(name);
      for (const chart of shuffled(charts, random)) colors.colorsOf(chart);
      if (colors.snapshot() !== before) moved++;
      // Every chart as drawn once the moves are told (each drawn chart draws again).
      const drawn = charts.map((chart) => colors.snapshot().colorsOf(chart));
      const colorOf = new Map<string, string>();
      drawn.forEach((colorsOfChart, c) => {
        expect(new Set(colorsOfChart).size, `chart ${c} in order ${order}`).toBe(charts[c].length);
        colorsOfChart.forEach((color, i) => {
          const name = charts[c][i];
          expect(colorOf.get(name) ?? color, `${name} in order ${order}`).toBe(color);
          colorOf.set(name, color);
        });
      });
    }
    // The charts were big enough for names to meet one that shares their colour.
    expect(moved).toBeGreaterThan(0);
  });
  it("tells the charts already drawn once a name moves, after the render that moved it", async () => {
    const colors = new SeriesColors();
    const names = Array.from({ length: 60 }, (_, i) => `client-${i}`);
    for (const name of names) colors.colorOf(name);
    const [a, b] = names.flatMap((x, i) =>
      names
        .slice(i + 1)
        .filter((y) => colors.colorOf(y) === colors.colorOf(x))
        .map((y) => [x, y]),
    )[0];
    let told = 0;
    const unsubscribe = colors.subscribe(() => told++);
    const before = colors.snapshot();
    expect(before.colorsOf([a])).toEqual([colors.colorOf(b)]);
    const [colorA, colorB] = colors.colorsOf([b, a]).reverse();
    expect(colorA).not.toBe(colorB);
    // b, seen later, moved for every chart; a kept its colour.
    expect(colors.colorOf(a)).toBe(colorA);
    expect(colors.colorOf(b)).toBe(colorB);
    expect(told).toBe(0);
    await Promise.resolve();
    expect(told).toBe(1);
    expect(colors.snapshot()).not.toBe(before);
    unsubscribe();
  });
  it("moves nothing while no chart draws two names of colours someone could mistake", async () => {
    const colors = new SeriesColors();
    let told = 0;
    colors.subscribe(() => told++);
    const before = colors.snapshot();
    const names = Array.from({ length: SERIES_COLORS.length }, (_, i) => `gateway-${i}`);
    const first = names.map((name) => colors.colorOf(name));
    // Names whose colours are all told apart, as the palette gave them.
    const distinct: string[] = [];
    for (const name of names) if (distinct.every((other) => apart(colors.colorOf(other), colors.colorOf(name)))) distinct.push(name);
    expect(distinct.length).toBeGreaterThanOrEqual(5);
    colors.colorsOf(distinct.slice(0, 4));
    colors.colorsOf(distinct.slice(2));
    await Promise.resolve();
    expect(names.map((name) => colors.colorOf(name))).toEqual(first);
    expect([told, colors.snapshot()]).toEqual([0, before]);
  });
  it("draws two or three series of a chart in colours told apart with normal and deficient colour vision, measured apart from how it chooses them", () => {
    const random = createRng(7);
    for (let trial = 0; trial < 500; trial++) {
      const colors = new SeriesColors();
      const names = Array.from({ length: 30 }, (_, i) => `writer-${trial}-${i}`);
      for (const name of shuffled(names, random)) colors.colorOf(name);
      const chart = shuffled(names, random).slice(0, 2 + (trial % 2));
      colors.colorsOf(chart);
      const drawn = colors.snapshot().colorsOf(chart);
      for (let i = 0; i < drawn.length; i++)
        for (let j = i + 1; j < drawn.length; j++) expect(leastDeltaE(drawn[i], drawn[j]), `${drawn[i]} beside ${drawn[j]}`).toBeGreaterThanOrEqual(12);
    }
  });
});

function shuffled<T>(items: readonly T[], random: () => number): T[] {
  const out = [...items];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
