/**
 * Many objects on one time axis, on the replay in Chromium: a lane per project Connector with its routed
 * projection and its transitions, drawn only where in view (scrolling draws the rest), each lane's transitions
 * as the generator wrote them, and no transition anywhere between 18:12Z on the 11th and 00:45Z on the 13th,
 * visible at a glance; sorted by wasted ratio on request; a lane opens its object.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WriteStore } from "@/lib/store/store";
import { startApp } from "../helpers/app";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { ARTIFACTS } from "../helpers/browser";
import { useReplayApp } from "../helpers/replay-app";

const h = useReplayApp();
const at = (iso: string) => Date.parse(iso);

/** Scrolls the lanes to the end, collecting every lane drawn on the way: key → its transition columns. */
async function everyLane(page: Page) {
  const seen = new Map<string, number[]>();
  let most = 0;
  for (let step = 0; step < 200; step++) {
    // Wait until the page has caught up with the scroll: no lane still loading, and drawn lanes cover the view from top to bottom.
    await page.waitForFunction(() => {
      const scroller = document.querySelector('[data-testid="lanes-scroller"]')!;
      if (scroller.querySelector(".animate-pulse")) return false;
      const lanes = [...scroller.querySelectorAll("[data-lane-object]")].map((l) => l.getBoundingClientRect());
      if (lanes.length === 0) return false;
      const view = scroller.getBoundingClientRect();
      const contentBottom = scroller.firstElementChild!.getBoundingClientRect().bottom;
      return Math.min(...lanes.map((r) => r.top)) <= view.top + 1 && Math.max(...lanes.map((r) => r.bottom)) >= Math.min(view.bottom, contentBottom) - 1;
    });
    const drawn = await page.$$eval("[data-lane-object]", (lanes) =>
      lanes.map(
        (l) =>
          [
            l.getAttribute("data-lane-object")!,
            [...l.querySelectorAll("[data-transition-column]")].map((t) => Number(t.getAttribute("data-transition-column"))),
          ] as const,
      ),
    );
    most = Math.max(most, drawn.length);
    for (const [key, columns] of drawn) seen.set(key, columns);
    const done = await page.$eval('[data-testid="lanes-scroller"]', (el) => el.scrollTop + el.clientHeight >= el.scrollHeight - 1);
    if (done) break;
    await page.$eval('[data-testid="lanes-scroller"]', (el) => el.scrollBy(0, el.clientHeight / 2));
  }
  return { seen, most };
}

describe("object lanes", () => {
  it("draws all of the project's Connectors, written or not, on one axis, virtualised, with no transition in the long quiet stretch", async () => {
    const { startMs, endMs } = h.replay.params;
    const { sink } = h.replay;
    const truth = new Map<string, number[]>();
    for (const w of sink.writes) {
      const o = sink.objects[w.objectIndex];
      if (o.cluster !== "milo" || o.kind !== "Connector" || w.timeMs <= startMs || w.timeMs > endMs) continue;
      const key = `milo/Connector/${o.namespace}/${o.name}`;
      const times = truth.get(key) ?? [];
      if (w.cls === "routed") times.push(w.timeMs);
      truth.set(key, times);
    }
    const written = truth.size;
    // The quiet ones too: every project Connector there when the incident began, written or not.
    sink.objects.forEach((o, i) => {
      if (o.cluster === "milo" && o.kind === "Connector" && sink.initial[i] !== null)
        truth.set(`milo/Connector/${o.namespace}/${o.name}`, truth.get(`milo/Connector/${o.namespace}/${o.name}`) ?? []);
    });
    expect(truth.size).toBeGreaterThanOrEqual(89);
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await page.goto(`${h.app.url}/objects/lanes`);
      await page.waitForURL((u) => u.searchParams.get("kind") === "Connector" && u.searchParams.get("cluster") === "milo");
      await page.waitForSelector('[data-testid="lanes"][data-state="ready"] [data-lane-object]', { timeout: 60_000 });
      expect(Number(await page.getAttribute('[data-testid="lanes"]', "data-total"))).toBe(truth.size);
      expect(Number(await page.getAttribute('[data-testid="lanes"]', "data-written"))).toBe(written);
      await page.screenshot({ path: join(ARTIFACTS, "lanes-laptop.png"), fullPage: true });
      const svg = (await page.locator("[data-lane-object] svg").first().boundingBox())!;
      const columns = Math.round(svg.width);
      const columnOf = (t: number) => Math.min(columns - 1, Math.floor(((t - startMs) * columns) / (endMs - startMs)));
      const { seen, most } = await everyLane(page);
      expect(seen.size).toBe(truth.size);
      // Only the lanes in view (and a few beyond) are in the page at any time.
      expect(most).toBeLessThan(60);
      for (const [key, times] of truth) expect(seen.get(key), key).toEqual([...new Set(times.map(columnOf))].sort((a, b) => a - b));
      const quiet = [columnOf(at("2026-09-11T18:12:00Z")) + 1, columnOf(at("2026-09-13T00:45:00Z")) - 1];
      const inQuiet = [...seen.values()].flat().filter((c) => c >= quiet[0] && c <= quiet[1]);
      expect(inQuiet).toEqual([]);
      expect([...seen.values()].flat().length).toBeGreaterThan(0);
    } finally {
      await page.close();
    }
  });

  it("sorts by wasted ratio and opens a lane's object", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await page.goto(`${h.app.url}/objects/lanes`);
      await page.waitForSelector('[data-testid="lanes"][data-state="ready"] [data-lane-object]', { timeout: 60_000 });
      await page.selectOption('[data-testid="lanes-sort"]', "wasted");
      await page.waitForURL((u) => u.searchParams.get("sort") === "wasted");
      const answer = await page.request.get(`${h.app.url}/api/objects/lanes?${new URL(page.url()).searchParams}&width=500`);
      const lanes = (await answer.json()).data.lanes as { name: string; wastedRatio: number }[];
      for (let i = 1; i < lanes.length; i++) expect(lanes[i].wastedRatio).toBeLessThanOrEqual(lanes[i - 1].wastedRatio);
      await page.waitForFunction((name) => document.querySelector("[data-lane-object]")?.getAttribute("data-lane-object")?.endsWith(`/${name}`), lanes[0].name);
      await page.locator("[data-lane-object] a").first().click();
      await page.waitForURL((u) => u.pathname.startsWith("/objects/milo/networking.datumapis.com/Connector/") && u.pathname.endsWith(`/${lanes[0].name}`));
    } finally {
      await page.close();
    }
  });

  it("scrolls through 2,000 objects drawing only the lanes in view, each lane's transitions where they are", async () => {
    // A store of 2,000 Connectors as a recorder would leave it: each flips between online and offline a few times.
    const dataDir = mkdtempSync(join(tmpdir(), "churnscope-lanes-"));
    const store = await WriteStore.open(join(dataDir, "churnscope.sqlite"));
    const startMs = at("2026-09-11T00:00:00Z");
    const endMs = startMs + 86_400_000;
    const flips = new Map<string, number[]>();
    await store.batch(async () => {
      for (let n = 0; n < 2_000; n++) {
        const name = `connector-${String(n).padStart(4, "0")}`;
        const key = { cluster: "c1", group: "networking.datumapis.com", kind: "Connector", namespace: "ns", name };
        const times: number[] = [];
        let online = "true";
        for (let k = 0; k < 3 + (n % 4); k++) {
          const tsMs = startMs + ((n * 7919 + k * 104_729) % 1_000) * 86_400 + 1;
          const routed = k % 3 === 0;
          if (routed) {
            online = online === "true" ? "false" : "true";
            times.push(tsMs);
          }
          await store.record(key, {
            tsMs,
            cls: routed ? "routed" : "unrouted",
            writer: "op",
            source: "watch",
            heartbeat: false,
            changes: [{ path: "status.x", before: k, after: k + 1 }],
            projection: { online },
          });
        }
        flips.set(`c1/Connector/ns/${name}`, times);
      }
    });
    await store.close();
    const live = await startApp({ CHURNSCOPE_DATA_DIR: dataDir });
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await page.goto(`${live.url}/objects/lanes?cluster=c1&group=networking.datumapis.com&kind=Connector&from=${startMs}&to=${endMs}&sort=name`);
      await page.waitForSelector('[data-testid="lanes"][data-state="ready"] [data-lane-object]', { timeout: 60_000 });
      expect(Number(await page.getAttribute('[data-testid="lanes"]', "data-total"))).toBe(2_000);
      const svg = (await page.locator("[data-lane-object] svg").first().boundingBox())!;
      const columns = Math.round(svg.width);
      const columnOf = (t: number) => Math.min(columns - 1, Math.floor(((t - startMs) * columns) / (endMs - startMs)));
      const { seen, most } = await everyLane(page);
      // Every lane was drawn on the way down, never more than a screenful (and a few beyond) at once.
      expect(seen.size).toBe(2_000);
      expect(most).toBeLessThan(60);
      for (const [key, times] of flips) expect(seen.get(key), key).toEqual([...new Set(times.map(columnOf))].sort((a, b) => a - b));
      await page.screenshot({ path: join(ARTIFACTS, "lanes-2000.png") });
    } finally {
      await page.close();
      await live.stop();
    }
  });
});
