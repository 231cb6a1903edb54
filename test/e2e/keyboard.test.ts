/**
 * The replay from the keyboard alone, in Chromium: on every page Tab reaches every control and link on
 * screen, each drawn with a visible focus ring; and from the first screen, Enter and the arrow keys lead to
 * the churning field, its writer and the proof that its writes never changed what consumers route on.
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { NAMED } from "@/lib/demo/params";
import { useReplayApp } from "../helpers/replay-app";

const h = useReplayApp();
const INTERACTIVE = 'a[href], button:not([disabled]), select, input:not([type="hidden"]), textarea, [tabindex]:not([tabindex="-1"])';

/** Tabs through the page once; answers each stop's outline and whether the page's controls were all reached. */
async function tabThrough(page: Page) {
  await page.evaluate((selector) => {
    let n = 0;
    for (const el of document.querySelectorAll<HTMLElement>(selector)) {
      const box = el.getBoundingClientRect();
      const style = getComputedStyle(el);
      if (box.width > 0 && box.height > 0 && style.visibility !== "hidden") el.dataset.kbdTarget = String(n++);
    }
  }, INTERACTIVE);
  const targets = await page.locator("[data-kbd-target]").count();
  const stops: { target: string | null; outline: string; width: number }[] = [];
  const reachedSoFar = new Set<string>();
  // Until every control was reached (controls that appear meanwhile are stops too), or far past their number.
  for (let i = 0; i < 4 * targets + 20 && reachedSoFar.size < targets; i++) {
    await page.keyboard.press("Tab");
    const stop = await page.evaluate(() => {
      const el = document.activeElement as HTMLElement | null;
      if (!el || el === document.body) return null;
      const style = getComputedStyle(el);
      return { target: el.dataset.kbdTarget ?? null, outline: style.outlineStyle, width: parseFloat(style.outlineWidth) };
    });
    if (stop) stops.push(stop);
    if (stop?.target) reachedSoFar.add(stop.target);
  }
  const reached = new Set(stops.map((s) => s.target).filter((t) => t !== null));
  const missed = await page.$$eval(
    "[data-kbd-target]",
    (els, seen) => els.filter((e) => !seen.includes(e.getAttribute("data-kbd-target")!)).map((e) => e.outerHTML.slice(0, 120)),
    [...reached] as string[],
  );
  return { stops, missed, targets };
}

describe("the keyboard alone", () => {
  it.each([
    ["write load", "/?snapshot=replay", '[data-panel="writes-by-resource"] [data-chart][data-drawn]'],
    ["edge rebuilds", "/rebuilds?snapshot=replay", '[data-panel="rebuild-rate"] [data-chart][data-drawn]'],
    ["objects", "/objects?snapshot=replay&kind=Connector", '[data-testid="objects-table"][data-state="ready"] tr[data-object]'],
    [
      "object timeline",
      `/objects/milo/networking.datumapis.com/Connector/${NAMED.project}/${NAMED.flipsThenFlaps}?snapshot=replay`,
      '[data-testid="timeline"][data-state="ready"] [data-column]',
    ],
  ])("reaches every control on the %s page, each with a visible focus ring", async (_name, path, ready) => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await page.goto(`${h.app.url}${path}`);
      await page.waitForSelector(ready, { state: "attached", timeout: 60_000 });
      // Every panel answered, so that the controls counted are all the page has.
      await page.waitForFunction(() => !document.querySelector('[data-state="loading"], [data-updating]'), undefined, { timeout: 60_000 });
      const { stops, missed, targets } = await tabThrough(page);
      expect(targets).toBeGreaterThan(5);
      expect(missed).toEqual([]);
      for (const stop of stops) {
        expect(stop.outline, `stop ${stop.target}`).not.toBe("none");
        expect(stop.width, `stop ${stop.target}`).toBeGreaterThanOrEqual(2);
      }
    } finally {
      await page.close();
    }
  });

  it("goes from the replay's first screen to a churning object's writes, each field, its writer and that routing did not change, without a mouse", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await page.goto(`${h.app.url}/`);
      await page.waitForSelector('[data-panel="writes-by-resource"] [data-chart][data-drawn]', { state: "attached", timeout: 60_000 });
      // 1: the selected resource's objects.
      await page.focus('[data-testid="objects-link"]');
      await page.keyboard.press("Enter");
      await page.waitForSelector('[data-testid="objects-table"][data-state="ready"] tr[data-object]', { timeout: 60_000 });
      // 2: the object the ranking puts first (its first link), the one whose field churns.
      await page.focus('[data-testid="objects-table"] tr[data-object] a');
      await page.keyboard.press("Enter");
      await page.waitForSelector('[data-testid="timeline"][data-state="ready"] [data-column]', { timeout: 60_000 });
      // 3: its first write, then the next ones: each names the field, the writer, and that routing did not change.
      await page.keyboard.press("ArrowRight");
      await page.waitForSelector('[data-testid="diff"] tr[data-change]');
      const fields = new Set<string>();
      for (let i = 0; i < 3; i++) {
        const place = await page.textContent('[data-testid="diff-place"]');
        for (const field of await page.$$eval("tr[data-change]", (rows) => rows.map((r) => r.getAttribute("data-change")!))) fields.add(field);
        await expect(page.textContent('[data-testid="diff-class"]')).resolves.toBe("unrouted");
        await expect(page.textContent('[data-testid="diff-writer"]')).resolves.toMatch(/network-services-operator|datum-connect/);
        await page.keyboard.press("ArrowRight");
        await page.waitForFunction((before) => document.querySelector('[data-testid="diff-place"]')?.textContent !== before, place);
      }
      expect(fields.size).toBeGreaterThan(0);
    } finally {
      await page.close();
    }
  });

  it("steps through a timeline from the keys: forty fast presses move forty writes in one history entry; Home, End and n reach the first, the last and the next routed write", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    const path = `/objects/milo/networking.datumapis.com/Connector/${NAMED.project}/${NAMED.flipsThenFlaps}`;
    try {
      const { startMs, endMs } = h.replay.params;
      await page.goto(`${h.app.url}${path}?snapshot=replay&from=${startMs}&to=${endMs}`);
      await page.waitForSelector('[data-testid="timeline"][data-state="ready"] [data-column]', { timeout: 60_000 });
      const place = async () => {
        const [, index, total] = /write ([\d,]+) of ([\d,]+)/.exec((await page.textContent('[data-testid="diff-place"]')) ?? "") ?? [];
        return index === undefined ? null : { index: Number(index.replace(/,/g, "")), total: Number(total.replace(/,/g, "")) };
      };
      await page.keyboard.press("ArrowRight");
      await expect.poll(place).toMatchObject({ index: 1 });
      const { total } = (await place())!;
      const entries = await page.evaluate(() => history.length);
      for (let i = 0; i < 40; i++) await page.keyboard.press("ArrowRight");
      await expect.poll(place, { timeout: 20_000 }).toEqual({ index: 41, total });
      expect(await page.evaluate(() => history.length)).toBe(entries);
      await page.keyboard.press("End");
      await expect.poll(place).toEqual({ index: total, total });
      await page.keyboard.press("Home");
      await expect.poll(place).toEqual({ index: 1, total });
      // The store's own list of the range's writes says where the routed ones are.
      const listed = (await (await fetch(`${h.app.url}/api${path}/writes?snapshot=replay&from=${startMs}&to=${endMs}`)).json()) as {
        data: { writes: { class: string }[] };
      };
      const routed = listed.data.writes.findIndex((w, i) => i > 0 && w.class === "routed") + 1;
      expect(routed).toBeGreaterThan(1);
      await page.keyboard.press("n");
      await expect.poll(place).toEqual({ index: routed, total });
      expect(await page.textContent('[data-testid="diff-class"]')).toContain("routed");
    } finally {
      await page.close();
    }
  });
});
