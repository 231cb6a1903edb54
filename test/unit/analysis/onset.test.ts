/** Onset detection on synthetic steps with noise, on flat noise, and on the replay bundle's real panel data. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { changePoints, detectOnset, riseStartMs } from "@/lib/analysis/onset";
import { DEFAULT_REPLAY } from "@/lib/demo/params";
import { createRng, type Rng } from "@/lib/scenario/rng";
import { decodeSnapshot } from "@/lib/snapshot/format/codec";
import { REPLAY_BUNDLE_PATH } from "@/lib/snapshot/store";

const STEP = 60_000;
/** Gaussian-ish noise (sum of uniforms), seeded. */
const noise = (rng: Rng) => rng() + rng() + rng() + rng() - 2;

function series(levels: { until: number; level: number }[], n: number, sigma: number, seed: number): [number, number][] {
  const rng = createRng(seed);
  const out: [number, number][] = [];
  for (let i = 0; i < n; i++) {
    const level = levels.find((l) => i < l.until)!.level;
    out.push([i * STEP, Math.max(0, level + sigma * noise(rng))]);
  }
  return out;
}

describe("onset detection", () => {
  it("finds a step up within one step, for steps of several sizes against noise", () => {
    for (const [seed, at, before, after, sigma] of [
      [1, 300, 0.1, 1.2, 0.05],
      [2, 123, 5, 9, 0.6],
      [3, 700, 0.02, 0.05, 0.004],
      [4, 50, 100, 260, 15],
    ] as const) {
      const points = series(
        [
          { until: at, level: before },
          { until: Infinity, level: after },
        ],
        900,
        sigma,
        seed,
      );
      const onset = detectOnset([{ labels: {}, points }]);
      expect(onset, `seed ${seed}`).not.toBeNull();
      expect(Math.abs(onset!.timeMs - at * STEP), `seed ${seed}`).toBeLessThanOrEqual(STEP);
      expect(Math.abs(onset!.before - before), `seed ${seed}`).toBeLessThan(sigma);
      expect(Math.abs(onset!.after - after), `seed ${seed}`).toBeLessThan(sigma);
    }
  });

  it("reports no onset on flat noise, over many seeds", () => {
    for (let seed = 100; seed < 160; seed++) {
      const points = series([{ until: Infinity, level: 0.5 }], 1000, 0.1, seed);
      expect(changePoints(points), `seed ${seed}`).toEqual([]);
    }
  });

  it("accounts for points that share a rate window, so smoothed noise is not an onset", () => {
    for (let seed = 200; seed < 240; seed++) {
      const raw = series([{ until: Infinity, level: 0.5 }], 1008, 0.2, seed).map((p) => p[1]);
      // A rate over 8 steps: each point is the mean of the last 8 raw values.
      const smoothed: [number, number][] = raw.slice(8).map((_, i) => [i * STEP, raw.slice(i, i + 8).reduce((a, b) => a + b, 0) / 8]);
      expect(changePoints(smoothed, { overlap: 8 }), `seed ${seed}`).toEqual([]);
    }
  });

  it("takes the first rise when the level goes up and back down, and names the series that moved most", () => {
    const rising = series(
      [
        { until: 400, level: 0.1 },
        { until: 800, level: 2 },
        { until: Infinity, level: 0.1 },
      ],
      1000,
      0.05,
      7,
    );
    const steady = series([{ until: Infinity, level: 1 }], 1000, 0.05, 8);
    const onset = detectOnset([
      { labels: { resource: "leases" }, points: steady },
      { labels: { resource: "connectors" }, points: rising },
    ]);
    expect(Math.abs(onset!.timeMs - 400 * STEP)).toBeLessThanOrEqual(STEP);
    expect(onset!.movers[0].labels).toEqual({ resource: "connectors" });
    expect(changePoints(rising).map((p) => Math.round(p.timeMs / STEP / 10) * 10)).toEqual([400, 800]);
  });

  it("finds the replay's onset at 13:12Z on 11 September within one step of the bundle's write rates", () => {
    const bundle = decodeSnapshot(readFileSync(join(process.cwd(), REPLAY_BUNDLE_PATH)), 64 << 20);
    for (const apiserver of ["milo-apiserver", "karmada-system/karmada-apiserver"]) {
      const panel = bundle.panels.find(
        (p) => p.panel === "writes-by-verb" && p.apiserver === apiserver && p.startMs === DEFAULT_REPLAY.startMs && p.resource?.startsWith("connectors"),
      )!;
      const onset = detectOnset(panel.result.data.series);
      expect(onset, apiserver).not.toBeNull();
      // A point covers the step that ends at its time, so the first raised point ends within a step after the onset.
      expect(onset!.timeMs - DEFAULT_REPLAY.onsetMs, apiserver).toBeGreaterThanOrEqual(0);
      expect(onset!.timeMs - DEFAULT_REPLAY.onsetMs, apiserver).toBeLessThanOrEqual(panel.result.data.stepSeconds * 1000);
    }
    // Checking the whole bundle takes about 3 s on a quiet machine; the other unit files share the cores.
  }, 30_000);
});

describe("the minute a rise began", () => {
  // Poisson-ish events: 0.5/s, then 4/s from 13:12:00; a rate over a window is the events in it over its length.
  const RISE_MS = Date.UTC(2026, 8, 11, 13, 12);
  const rng = createRng(7);
  const events: number[] = [];
  for (let t = RISE_MS - 3_600_000; t < RISE_MS + 3_600_000; t += 100) if (rng() < (t < RISE_MS ? 0.05 : 0.4)) events.push(t);
  const rateChart = (stepSeconds: number, windowSeconds: number, fromMs: number, toMs: number) => {
    const points: [number, number][] = [];
    for (let t = fromMs; t <= toMs; t += stepSeconds * 1000)
      points.push([t, events.filter((e) => e > t - windowSeconds * 1000 && e <= t).length / windowSeconds]);
    return { series: [{ labels: { resource: "connectors" }, points }], stepSeconds, windowSeconds };
  };

  it("names the same minute at every step and rate window, from a stretch either side of it", () => {
    for (const [stepSeconds, windowSeconds] of [
      [15, 60],
      [30, 120],
      [60, 240],
      [15, 300],
    ]) {
      const chart = rateChart(stepSeconds, windowSeconds, RISE_MS - 20 * 60_000, RISE_MS + 20 * 60_000);
      expect(new Date(riseStartMs(chart, RISE_MS - 10 * 60_000, RISE_MS + 5 * 60_000) ?? 0).toISOString(), `${stepSeconds} s / ${windowSeconds} s`).toBe(
        new Date(RISE_MS).toISOString(),
      );
    }
  });

  it("names none when the rise began outside the stretch asked about, or nothing rose", () => {
    expect(riseStartMs(rateChart(30, 120, RISE_MS - 20 * 60_000, RISE_MS + 20 * 60_000), RISE_MS + 5 * 60_000, RISE_MS + 15 * 60_000)).toBeNull();
    expect(riseStartMs(rateChart(30, 120, RISE_MS - 50 * 60_000, RISE_MS - 10 * 60_000), RISE_MS - 40 * 60_000, RISE_MS - 20 * 60_000)).toBeNull();
  });
});
