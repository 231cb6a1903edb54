/**
 * Exploring the replay's charts in Chromium as in Grafana: a drag zooms inside the data the replay holds
 * (never a red error) and Zoom out or Back undoes it; the crosshair follows on every chart while only the
 * chart under the pointer shows values; a legend entry shows only its series; a name has one colour on every
 * chart; and a tooltip on a phone wraps a long name instead of cutting it.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { formatRange } from "@/lib/format/time";
import { replayRanges } from "@/lib/demo/replay-views";
import { ARTIFACTS, waitForDrawn } from "../helpers/browser";
import { useReplayApp } from "../helpers/replay-app";

const h = useReplayApp();
const CONNECTORS = "connectors.networking.datumapis.com";
const WHOLE = `/?snapshot=replay&resource=${CONNECTORS}`;
const BY_RESOURCE = '[data-panel="writes-by-resource"]';

/** "#3b82f6" as the browser reports a style's colour: "rgb(59, 130, 246)". */
function rgb(hex: string): string {
  const [r, g, b] = [1, 3, 5].map((at) => parseInt(hex.slice(at, at + 2), 16));
  return `rgb(${r}, ${g}, ${b})`;
}

/** The chart's plotting area (uPlot's event layer) in page pixels. */
async function plotArea(page: Page, panel: string) {
  const box = await page.locator(`[data-panel="${panel}"] .u-over`).boundingBox();
  if (!box) throw new Error(`${panel} has no plotting area`);
  return box;
}

/** Each legend entry's name and swatch colour, in order. */
function swatches(page: Page, panel: string) {
  return page.$$eval(`[data-panel="${panel}"] [data-legend-entry]`, (es) =>
    es.map((e) => [e.getAttribute("data-legend-entry")!, (e.querySelector("[data-legend-swatch]") as HTMLElement).style.background] as const),
  );
}

/** The colours the chart's last draw gave its series, in order. */
async function drawnColors(page: Page, panel: string): Promise<string[]> {
  return ((await page.getAttribute(`[data-panel="${panel}"] [data-chart]`, "data-colors")) ?? "").split(" ").filter(Boolean).map(rgb);
}

/** Where Writes by resource and Watch fan-out, or a chart and its legend, disagree on a name's colour now. */
async function disagreements(page: Page): Promise<string[]> {
  const [byResource, fanout] = [new Map(await swatches(page, "writes-by-resource")), await swatches(page, "watch-fanout")];
  const out = fanout.filter(([name, color]) => byResource.get(name) !== color).map(([name, color]) => `${name}: ${color} and ${byResource.get(name)}`);
  // Each chart last drew its series in its legend's colours (a name that moved since the chart's first draw too).
  if ((await drawnColors(page, "writes-by-resource")).join() !== [...byResource.values()].join()) out.push("writes-by-resource drew other colours");
  if ((await drawnColors(page, "watch-fanout")).join() !== fanout.map(([, color]) => color).join()) out.push("watch-fanout drew other colours");
  return out;
}

interface Point {
  labels: Record<string, string>;
  points: [number, number | null][];
}

async function panelAnswer(page: Page, query: string): Promise<{ startMs: number; endMs: number; stepSeconds: number; series: Point[] }> {
  const response = await page.request.get(`${h.app.url}/api/panels/writes-by-resource?${query}`);
  expect(response.status()).toBe(200);
  return (await response.json()).data;
}

describe("zoom, crosshair, legend and colours on the replay", () => {
  it("a drag zooms inside the held data at its step, Zoom out and Back undo it, and nothing turns red", async () => {
    const whole = replayRanges(h.replay.params)[0];
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await page.goto(`${h.app.url}${WHOLE}`);
      await waitForDrawn(page, "writes-by-resource");
      const area = await plotArea(page, "writes-by-resource");
      const y = area.y + area.height / 2;
      await page.mouse.move(area.x + area.width * 0.4, y);
      await page.mouse.down();
      await page.mouse.move(area.x + area.width * 0.5, y, { steps: 5 });
      await page.mouse.move(area.x + area.width * 0.6, y, { steps: 5 });
      await page.mouse.up();
      await page.waitForURL((url) => url.searchParams.get("from") !== null);
      const url = new URL(page.url());
      const fromMs = Number(url.searchParams.get("from"));
      const toMs = Number(url.searchParams.get("to"));
      // The drag's ends in time, read from the pixels: one pixel's worth of time, and whole seconds, apart at most.
      const span = whole.endMs - whole.startMs;
      const pixelMs = span / area.width;
      expect(Math.abs(fromMs - (whole.startMs + 0.4 * span))).toBeLessThanOrEqual(pixelMs + 1_000);
      expect(Math.abs(toMs - (whole.startMs + 0.6 * span))).toBeLessThanOrEqual(pixelMs + 1_000);
      expect(url.searchParams.get("snapshot")).toBe("replay");
      expect(url.searchParams.get("resource")).toBe(CONNECTORS);

      await waitForDrawn(page, "writes-by-resource");
      await expect(page.textContent('[data-testid="snapshot-zoom"]')).resolves.toContain(formatRange(fromMs, toMs));
      // The banner still names what the snapshot holds; the zoom is said beside the range buttons.
      await expect(page.textContent('[data-testid="snapshot-banner"]')).resolves.toContain(`Snapshot of ${formatRange(whole.startMs, whole.endMs)} (UTC)`);
      await page.waitForSelector('[data-panel="write-totals"][data-state="not-held"]');
      await expect(page.textContent('[data-panel="write-totals"]')).resolves.toMatch(/Not in this snapshot: this snapshot holds these totals for .* only/);
      await waitForDrawn(page, ["writes-by-verb", "effective-writes", "write-errors", "lease-renewals", "watch-fanout"]);
      expect(await page.locator('main [role="alert"]').allTextContents()).toEqual([]);
      await page.screenshot({ path: join(ARTIFACTS, "zoom-replay-laptop.png") });

      // The zoom shows exactly the held points inside it, at the held step.
      const held = await panelAnswer(page, `snapshot=replay&from=${whole.startMs}&to=${whole.endMs}&resource=${CONNECTORS}`);
      const zoomed = await panelAnswer(page, `snapshot=replay&from=${fromMs}&to=${toMs}&resource=${CONNECTORS}`);
      expect(zoomed.stepSeconds).toBe(held.stepSeconds);
      const inside = held.series
        .map((s) => ({ labels: s.labels, points: s.points.filter(([t]) => t >= fromMs && t <= toMs) }))
        .filter((s) => s.points.length > 0);
      expect(zoomed.series).toEqual(inside);
      expect(inside.reduce((n, s) => n + s.points.length, 0)).toBeGreaterThan(0);

      // Zoom out doubles the range around its middle; Back returns to the zoom, then to the whole replay.
      await page.click('[data-testid="zoom-out"]');
      await page.waitForURL((u) => Number(u.searchParams.get("from")) < fromMs);
      const out = new URL(page.url());
      expect(Number(out.searchParams.get("to")) - Number(out.searchParams.get("from"))).toBe(2 * (toMs - fromMs));
      await page.goBack();
      await page.waitForURL((u) => Number(u.searchParams.get("from")) === fromMs);
      await page.goBack();
      await page.waitForURL((u) => u.searchParams.get("from") === null);
      await waitForDrawn(page, "writes-by-resource");
      expect(await page.locator('[data-testid="snapshot-zoom"]').count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it("moves the crosshair on every chart and shows values only on the chart under the pointer", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await page.goto(`${h.app.url}${WHOLE}`);
      await waitForDrawn(page, "writes-by-resource");
      await waitForDrawn(page, "writes-by-verb");
      const area = await plotArea(page, "writes-by-resource");
      await page.mouse.move(area.x + area.width * 0.3, area.y + area.height / 2);
      await page.waitForSelector(`${BY_RESOURCE} [role="tooltip"]`);
      const other = await plotArea(page, "writes-by-verb");
      await page.waitForSelector('[data-panel="writes-by-verb"] .u-cursor-x:not(.u-off)', { state: "attached" });
      const line = await page.locator('[data-panel="writes-by-verb"] .u-cursor-x').boundingBox();
      // Both charts span the same range, so the other chart's line is at the same fraction of its width.
      expect(Math.abs((line!.x - other.x) / other.width - 0.3)).toBeLessThan(0.01);
      expect(await page.locator('[role="tooltip"]').count()).toBe(1);
    } finally {
      await page.close();
    }
  });

  it("shows only a legend entry's series when it is clicked, all again on a second click, and hides one with Ctrl", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await page.goto(`${h.app.url}${WHOLE}`);
      await waitForDrawn(page, "writes-by-resource");
      const entries = page.locator(`${BY_RESOURCE} [data-legend-entry]`);
      const names = await entries.evaluateAll((es) => es.map((e) => e.getAttribute("data-legend-entry")!));
      const target = names.find((n) => n.endsWith(CONNECTORS))!;
      const pressed = () =>
        entries.evaluateAll((es) => es.filter((e) => e.getAttribute("aria-pressed") === "true").map((e) => e.getAttribute("data-legend-entry")));
      await page.click(`${BY_RESOURCE} [data-legend-entry="${target}"]`);
      await expect(pressed()).resolves.toEqual([target]);
      const area = await plotArea(page, "writes-by-resource");
      await page.mouse.move(area.x + area.width * 0.5, area.y + area.height / 2);
      const rows = page.locator(`${BY_RESOURCE} [role="tooltip"] [data-tooltip-name]`);
      await rows.first().waitFor();
      await expect(rows.allTextContents()).resolves.toEqual([target]);
      // Selecting it changed nothing else on the page: the resource in the URL is the same.
      expect(new URL(page.url()).searchParams.get("resource")).toBe(CONNECTORS);
      await page.click(`${BY_RESOURCE} [data-legend-entry="${target}"]`);
      await expect(pressed()).resolves.toEqual(names);
      await page.click(`${BY_RESOURCE} [data-legend-entry="${names[0]}"]`, { modifiers: ["Control"] });
      await expect(pressed()).resolves.toEqual(names.slice(1));
    } finally {
      await page.close();
    }
  });

  it("gives a series name one colour on every chart and page", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await page.goto(`${h.app.url}${WHOLE}`);
      await waitForDrawn(page, "writes-by-resource");
      await waitForDrawn(page, "watch-fanout");
      // The page's other charts may still be answering: a name they draw beside one of its colour moves, on every chart.
      await expect.poll(() => disagreements(page), { timeout: 15_000, interval: 250 }).toEqual([]);
      const byResource = new Map(await swatches(page, "writes-by-resource"));
      expect((await swatches(page, "watch-fanout")).length).toBeGreaterThan(0);
      // One chart never draws two series alike while it has fewer series than colours.
      expect(new Set(byResource.values()).size).toBe(byResource.size);

      // Another page in the same tab: the gateways keep their colours from one chart to the next.
      await page.click('a[href^="/rebuilds"]');
      await waitForDrawn(page, "rebuild-rate");
      await waitForDrawn(page, "rebuild-busy");
      const rate = await swatches(page, "rebuild-rate");
      const busy = new Map(await swatches(page, "rebuild-busy"));
      expect(rate.length).toBeGreaterThan(1);
      for (const [name, color] of rate) expect(busy.get(name), name).toBe(color);
    } finally {
      await page.close();
    }
  });

  it("wraps a long name in a tooltip on a phone instead of cutting it, inside the screen", async () => {
    const page = await h.browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await page.goto(`${h.app.url}${WHOLE}`);
      await waitForDrawn(page, "writes-by-resource");
      await page.locator(`${BY_RESOURCE} .u-over`).scrollIntoViewIfNeeded();
      const area = await plotArea(page, "writes-by-resource");
      for (const fraction of [0.15, 0.85]) {
        await page.mouse.move(area.x + area.width * fraction, area.y + area.height / 2);
        const tooltip = page.locator(`${BY_RESOURCE} [role="tooltip"]`);
        await tooltip.waitFor();
        const box = (await tooltip.boundingBox())!;
        expect(box.x).toBeGreaterThanOrEqual(0);
        expect(box.x + box.width).toBeLessThanOrEqual(390);
        const names = await tooltip
          .locator("[data-tooltip-name]")
          .evaluateAll((es) => es.map((e) => ({ text: e.textContent, cut: e.scrollWidth > e.clientWidth + 1, right: e.getBoundingClientRect().right })));
        const legend = await page.$$eval(`${BY_RESOURCE} [data-legend-entry]`, (es) => es.map((e) => e.getAttribute("data-legend-entry")));
        for (const n of names) {
          expect(n.cut, n.text!).toBe(false);
          expect(legend).toContain(n.text);
          expect(n.right).toBeLessThanOrEqual(390);
        }
        await page.screenshot({ path: join(ARTIFACTS, `zoom-tooltip-phone-${fraction}.png`) });
      }
    } finally {
      await page.close();
    }
  });
});
