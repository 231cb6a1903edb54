/**
 * An alert link opened on call: every page of the replay at 390 px wide (a phone), in Chromium. The
 * page never scrolls sideways (a wide table scrolls in its own box), and its main content is there.
 * Screenshots land in test-results/phone-*.png.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { ARTIFACTS } from "../helpers/browser";
import { useReplayApp } from "../helpers/replay-app";

const h = useReplayApp();
const RANGE = "snapshot=replay&from=1789135200000&to=1789164000000";

const PAGES: [string, string, string][] = [
  ["write-load", `/?${RANGE}&resource=connectors.networking.datumapis.com`, '[data-panel="writes-by-resource"] [data-chart][data-drawn]'],
  // On a phone the signal panels are one line each until tapped.
  ["write-load-hub", `/?${RANGE}&apiserver=${encodeURIComponent("karmada-system/karmada-apiserver")}`, '[data-collapsed-signal="noop-evidence"]'],
  ["rebuilds", `/rebuilds?${RANGE}`, "[data-panel] [data-chart][data-drawn]"],
  ["objects", `/objects?${RANGE}`, '[data-testid="objects-table"]'],
  ["lanes", `/objects/lanes?${RANGE}&cluster=milo&group=networking.datumapis.com&kind=Connector`, '[data-testid="lanes"] [data-lane-object]'],
  ["fields", `/fields?${RANGE}`, "table"],
  ["compare", `/compare?${RANGE}`, "main"],
  ["clients", `/clients?${RANGE}`, "main"],
];

/** What sticks out past the viewport's right edge, outside any box that scrolls on its own. */
function overflowing(page: Page): Promise<string[]> {
  return page.evaluate(() => {
    const width = document.documentElement.clientWidth;
    const scrollsItself = (el: Element | null): boolean => {
      for (let e = el?.parentElement ?? null; e; e = e.parentElement) {
        const style = getComputedStyle(e);
        if (style.overflowX === "auto" || style.overflowX === "scroll" || style.overflowX === "hidden") return true;
      }
      return false;
    };
    const out: string[] = [];
    for (const el of Array.from(document.body.querySelectorAll("*"))) {
      const box = el.getBoundingClientRect();
      if (box.width === 0 || box.right <= width + 1 || scrollsItself(el)) continue;
      out.push(
        `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ""}.${(el.getAttribute("class") ?? "").split(" ").slice(0, 3).join(".")} right=${Math.round(box.right)}`,
      );
    }
    // Text that runs past its own box (a long unbroken query, say) widens the page without any element doing so.
    for (const el of Array.from(document.body.querySelectorAll("*"))) {
      const style = getComputedStyle(el);
      const block = el instanceof HTMLElement && style.display !== "inline" && style.display !== "none";
      if (block && style.overflowX === "visible" && el.scrollWidth > el.clientWidth + 1 && el.children.length === 0 && !scrollsItself(el))
        out.push(`${el.tagName.toLowerCase()} text runs to ${el.scrollWidth} px in ${el.clientWidth}`);
    }
    return document.documentElement.scrollWidth > width ? [`page scrolls to ${document.documentElement.scrollWidth} px`, ...out.slice(0, 8)] : out.slice(0, 8);
  });
}

describe("on a phone", () => {
  it.each(PAGES)("the %s page fits 390 px and shows its content", async (name, path, content) => {
    const page = await h.browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    try {
      await page.goto(`${h.app.url}${path}`);
      await page.waitForSelector(content, { state: "attached", timeout: 30_000 });
      await page.waitForLoadState("networkidle");
      await page.screenshot({ path: join(ARTIFACTS, `phone-${name}.png`), fullPage: true });
      expect(await overflowing(page)).toEqual([]);
    } finally {
      await page.close();
    }
  });

  it("shows Write load's rate charts first and under 3,000 px, the five beside each other to swipe, each signal one line until tapped", async () => {
    const page = await h.browser.newPage({ viewport: { width: 390, height: 844 }, deviceScaleFactor: 2, isMobile: true, hasTouch: true });
    const asked: string[] = [];
    page.on("request", (r) => asked.push(new URL(r.url()).pathname));
    try {
      await page.goto(`${h.app.url}/?${RANGE}&resource=connectors.networking.datumapis.com`);
      await page.waitForSelector('[data-panel="writes-by-resource"] [data-chart][data-drawn]', { timeout: 30_000 });
      await page.waitForSelector('[data-testid="rate-charts"] [data-panel="watch-fanout"] [data-chart][data-drawn]', { state: "attached", timeout: 30_000 });
      await page.waitForLoadState("networkidle");
      expect(await page.evaluate(() => document.documentElement.scrollHeight)).toBeLessThan(3000);
      // Writes by resource starts on the first screen, as it does on the whole incident (below).
      const chartTop = () => page.locator('[data-panel="writes-by-resource"] [data-chart]').evaluate((e) => e.getBoundingClientRect().top + window.scrollY);
      expect(await chartTop()).toBeLessThan(844);
      // The five rate charts are one row, side by side, the first at the left edge.
      const tops = await page.locator('[data-testid="rate-charts"] > section').evaluateAll((els) => els.map((e) => Math.round(e.getBoundingClientRect().top)));
      expect(tops).toHaveLength(5);
      expect(new Set(tops).size).toBe(1);
      // Every signal is one line, and none was asked for.
      const signals = ["noop-evidence", "fanout-per-write", "request-cost", "watch-bytes", "object-sizes"];
      for (const id of signals) expect(await page.locator(`[data-collapsed-signal="${id}"]`).count(), id).toBe(1);
      expect(asked.filter((path) => signals.some((id) => path.endsWith(`/${id}`)))).toEqual([]);
      // Tapped, it opens and draws.
      await page.locator('[data-collapsed-signal="request-cost"]').tap();
      await page.waitForSelector('[data-panel="request-cost"] [data-chart][data-drawn]', { state: "attached", timeout: 30_000 });
      expect(await page.locator('[data-collapsed-signal="request-cost"]').count()).toBe(0);
      await page.screenshot({ path: join(ARTIFACTS, "phone-write-load-signal-open.png"), fullPage: true });
      expect(await overflowing(page)).toEqual([]);
      // The README's first page, the whole incident: its first chart on the first screen too.
      await page.goto(h.app.url);
      await page.waitForSelector('[data-panel="writes-by-resource"] [data-chart][data-drawn]', { timeout: 30_000 });
      await page.waitForSelector('[data-testid="onset-summary"]', { timeout: 30_000 });
      expect(await chartTop()).toBeLessThan(844);
    } finally {
      await page.close();
    }
  });

  it("has a skip link as the keyboard's first stop, which leads to the page itself", async () => {
    const page = await h.browser.newPage({ viewport: { width: 390, height: 844 } });
    try {
      await page.goto(`${h.app.url}/objects?${RANGE}`);
      await page.waitForSelector('[data-testid="objects-table"]', { timeout: 30_000 });
      await page.keyboard.press("Tab");
      const first = await page.evaluate(() => ({
        text: document.activeElement?.textContent,
        visible: (document.activeElement as HTMLElement | null)?.getBoundingClientRect().width ?? 0,
      }));
      expect(first.text).toBe("Skip to content");
      expect(first.visible).toBeGreaterThan(20);
      await page.keyboard.press("Enter");
      await expect(page.evaluate(() => document.activeElement?.id)).resolves.toBe("content");
    } finally {
      await page.close();
    }
  });
});
