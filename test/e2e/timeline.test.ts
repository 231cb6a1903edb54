/**
 * An object's timeline on the replay in Chromium: a UTC time axis with the replay's markers, every write
 * of the whole incident drawn (not the first 5,000), ←/→ stepping through the writes in time order with
 * the diff following and saying whether each write changed anything the profile keeps, a drag that zooms,
 * and a phone that fits it.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { NAMED } from "@/lib/demo/params";
import { ARTIFACTS } from "../helpers/browser";
import { useReplayApp } from "../helpers/replay-app";

const h = useReplayApp();

function timelineOf(name: string) {
  const { startMs, endMs } = h.replay.params;
  const index = h.replay.sink.objects.findIndex((o) => o.cluster === "milo" && o.kind === "Connector" && o.name === name);
  const writes = h.replay.sink.writes
    .filter((w) => w.objectIndex === index && w.timeMs > startMs && w.timeMs <= endMs)
    .map((w, order) => ({ ...w, order }))
    .sort((a, b) => a.timeMs - b.timeMs || a.order - b.order);
  const path = `/objects/milo/networking.datumapis.com/Connector/${NAMED.project}/${name}?snapshot=replay&from=${startMs}&to=${endMs}`;
  return { startMs, endMs, writes, path };
}

async function ready(page: Page) {
  await page.waitForSelector('[data-testid="timeline"][data-state="ready"] [data-column]', { timeout: 60_000 });
}

const shownWrite = async (page: Page) => ({
  ts: Number(await page.getAttribute('[data-testid="diff-time"]', "data-ts")),
  place: await page.textContent('[data-testid="diff-place"]'),
  kept: await page.getAttribute('[data-testid="diff-kept"]', "data-kept"),
  cls: await page.textContent('[data-testid="diff-class"]'),
});

describe("an object's timeline", () => {
  it("has a UTC time axis and the replay's markers, and draws every write of the incident", async () => {
    const { startMs, endMs, writes, path } = timelineOf(NAMED.flipsThenFlaps);
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await page.goto(`${h.app.url}${path}`);
      await ready(page);
      await expect(page.textContent('[data-testid="write-counts"]')).resolves.toMatch(new RegExp(`^${writes.length.toLocaleString("en-US")} writes`));
      const counted = await page.$$eval("[data-column]", (gs) => gs.reduce((n, g) => n + Number(g.getAttribute("data-n")), 0));
      expect(counted).toBe(writes.length);
      // The CSV holds every write, oldest first, at the generator's times.
      const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="timeline-csv"]')]);
      const csv = readFileSync((await download.path())!, "utf8")
        .trim()
        .split("\n");
      expect(csv[0].split(",").slice(0, 4)).toEqual(["time_utc", "timestamp_ms", "class", "writer"]);
      expect(csv.slice(1).map((line) => Number(line.split(",")[1]))).toEqual(writes.map((w) => w.timeMs));
      expect(download.suggestedFilename()).toBe(`Connector-${NAMED.flipsThenFlaps}-writes.csv`);
      const svg = (await page.locator('[data-testid="timeline"] svg').boundingBox())!;
      const plot = svg.width - 260;
      // Ticks fall on whole UTC hours or days, each drawn where its time is and labelled with it.
      const ticks = await page.$$eval("[data-axis-tick]", (gs) =>
        gs.map((g) => ({ t: Number(g.getAttribute("data-axis-tick")), x: Number(g.querySelector("line")!.getAttribute("x1")), label: g.textContent })),
      );
      expect(ticks.length).toBeGreaterThanOrEqual(4);
      for (const tick of ticks) {
        expect(tick.t % 3_600_000).toBe(0);
        expect(Math.abs(tick.x - (260 + ((tick.t - startMs) / (endMs - startMs)) * plot))).toBeLessThan(1);
        const d = new Date(tick.t);
        const hm = `${String(d.getUTCHours()).padStart(2, "0")}:${String(d.getUTCMinutes()).padStart(2, "0")}`;
        expect(tick.label).toBe(`${String(d.getUTCMonth() + 1).padStart(2, "0")}-${String(d.getUTCDate()).padStart(2, "0")} ${hm}`);
      }
      const markers = h.replay.params.markers.filter((m) => m.timeMs >= startMs && m.timeMs <= endMs).map((m) => m.label);
      expect(markers.length).toBeGreaterThan(0);
      const drawnMarkers = () =>
        page.$$eval('[data-testid="timeline"] [data-marker]', (gs) =>
          gs.map((g) => ({ label: g.getAttribute("data-marker"), kind: g.getAttribute("data-marker-kind") })),
        );
      // The markers come in an answer of their own, after the timeline's.
      await expect
        .poll(
          async () =>
            (await drawnMarkers())
              .filter((m) => m.kind !== "change" && m.kind !== "onset")
              .map((m) => m.label)
              .sort(),
          { timeout: 15_000 },
        )
        .toEqual([...markers].sort());
      const drawn = await drawnMarkers();
      // The page's one onset too (test/e2e/one-onset.test.ts checks its minute).
      expect(drawn.filter((m) => m.kind === "onset").map((m) => m.label)).toEqual(["onset (detected)"]);
      // And the generator's rollouts and rollback in the range, as recorded changes.
      const { objects, writes: generated } = h.replay.sink;
      const rollouts = generated.filter(
        (w) => w.timeMs >= startMs && w.timeMs <= endMs && ["Deployment", "Kustomization"].includes(objects[w.objectIndex].kind),
      );
      expect(drawn.filter((m) => m.kind === "change")).toHaveLength(rollouts.length);
      await page.screenshot({ path: join(ARTIFACTS, "timeline-laptop.png"), fullPage: true });
    } finally {
      await page.close();
    }
  });

  it("steps through the writes with ←/→, the diff following and saying whether each changed what the profile keeps", async () => {
    const { writes, path } = timelineOf(NAMED.flipsThenFlaps);
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await page.goto(`${h.app.url}${path}`);
      await ready(page);
      // The replay's Connector writes each changed something the profile keeps (the audit test covers a no-op).
      const verdict = (cls: string) => (cls === "routed" || cls === "unrouted" || cls === "create" || cls === "delete" ? "yes" : "other");
      await page.keyboard.press("ArrowRight");
      await page.waitForSelector('[data-testid="diff-place"]');
      for (let i = 0; i < 6; i++) {
        await page.waitForFunction((n) => document.querySelector('[data-testid="diff-place"]')?.textContent?.startsWith(`write ${n} of`), i + 1);
        const shown = await shownWrite(page);
        expect(shown).toEqual({
          ts: writes[i].timeMs,
          place: `write ${i + 1} of ${writes.length.toLocaleString("en-US")}`,
          kept: verdict(writes[i].cls),
          cls: writes[i].cls,
        });
        await page.keyboard.press("ArrowRight");
      }
      await page.waitForFunction(() => document.querySelector('[data-testid="diff-place"]')?.textContent?.startsWith("write 7 of"));
      await page.keyboard.press("ArrowLeft");
      await page.waitForFunction(() => document.querySelector('[data-testid="diff-place"]')?.textContent?.startsWith("write 6 of"));
      expect((await shownWrite(page)).ts).toBe(writes[5].timeMs);
      expect(new URL(page.url()).searchParams.get("write")).not.toBeNull();
      await page.screenshot({ path: join(ARTIFACTS, "timeline-stepped.png"), fullPage: true });
    } finally {
      await page.close();
    }
  });

  it("zooms on a drag, and fits a phone", async () => {
    const { startMs, endMs, path } = timelineOf(NAMED.flipsThenFlaps);
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await page.goto(`${h.app.url}${path}`);
      await ready(page);
      const svg = (await page.locator('[data-testid="timeline"] svg').boundingBox())!;
      const plot = svg.width - 260;
      const y = svg.y + svg.height - 30;
      await page.mouse.move(svg.x + 260 + plot * 0.5, y);
      await page.mouse.down();
      await page.mouse.move(svg.x + 260 + plot * 0.75, y, { steps: 6 });
      await page.mouse.up();
      await page.waitForURL((u) => Number(u.searchParams.get("from")) > startMs);
      const url = new URL(page.url());
      const span = endMs - startMs;
      expect(Math.abs(Number(url.searchParams.get("from")) - (startMs + 0.5 * span))).toBeLessThanOrEqual(span / plot + 1000);
      expect(Math.abs(Number(url.searchParams.get("to")) - (startMs + 0.75 * span))).toBeLessThanOrEqual(span / plot + 1000);
      await ready(page);
      await page.setViewportSize({ width: 390, height: 844 });
      await page.waitForTimeout(300);
      await ready(page);
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.screenshot({ path: join(ARTIFACTS, "timeline-phone.png"), fullPage: true });
    } finally {
      await page.close();
    }
  });
});
