/**
 * Marker labels on the replay's charts, in Chromium, on a laptop and on a phone: each label is drawn
 * beside its own line and across no other marker's line, and where it is drawn whole it says its time.
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { formatUtc } from "@/lib/format/time";
import { ARTIFACTS } from "../helpers/browser";
import { useReplayApp } from "../helpers/replay-app";

const h = useReplayApp();
// The replay's busiest stretch of markers (the onset, a release, the rollback), and the whole replay, where they are pixels apart.
const ONSET_DAY = "/?snapshot=replay&from=1789131600000&to=1789164000000&resource=connectors.networking.datumapis.com";
const WHOLE = "/?snapshot=replay&resource=connectors.networking.datumapis.com";

describe("marker labels", () => {
  it.each([
    ["laptop", 1400, "onset-day", ONSET_DAY],
    ["phone", 390, "onset-day", ONSET_DAY],
    ["laptop", 1400, "whole", WHOLE],
  ])("sit beside their own line on a %s, %i px wide, over the %s range", async (name, width, range, path) => {
    const page = await h.browser.newPage({ viewport: { width, height: 900 } });
    try {
      await page.goto(`${h.app.url}${path}`);
      const chart = '[data-panel="writes-by-resource"]';
      await page.waitForSelector(`${chart} [data-chart][data-drawn]`, { state: "attached", timeout: 30_000 });
      await page.locator(chart).screenshot({ path: join(ARTIFACTS, `markers-${name}-${range}.png`) });
      const drawn = await page.$$eval(`${chart} [data-marker-label]`, (labels) =>
        labels.map((label) => {
          const box = label.getBoundingClientRect();
          const svg = label.closest("svg")!.getBoundingClientRect();
          return {
            label: label.getAttribute("data-marker-label")!,
            x: Number(label.getAttribute("data-marker-x")),
            left: box.left - svg.left,
            right: box.right - svg.left,
            text: Array.from(label.childNodes)
              .filter((n) => n.nodeType === Node.TEXT_NODE)
              .map((n) => n.textContent)
              .join(""),
          };
        }),
      );
      const lines = await page.$$eval(`${chart} [data-marker] line`, (ls) => ls.map((l) => Number(l.getAttribute("x1"))));
      const shown = h.replay.params.markers;
      expect(drawn.length).toBeGreaterThan(0);
      for (const d of drawn) {
        // Its own line touches one end of it; no other line passes under it (the text's outline aside).
        expect(Math.min(Math.abs(d.left - d.x), Math.abs(d.right - d.x)), d.label).toBeLessThan(6);
        for (const x of lines)
          if (Math.abs(x - d.x) > 0.5) expect(x < d.left + 1 || x > d.right - 1, `${d.label} [${d.left}, ${d.right}] crosses the line at ${x}`).toBe(true);
        const marker = shown.find((m) => m.label === d.label);
        if (marker && !d.text.endsWith("…") && d.text !== marker.label) expect(d.text).toBe(`${marker.label} ${formatUtc(marker.timeMs, false).slice(11)}`);
      }
    } finally {
      await page.close();
    }
  });

  it("lists every marker of the range with its time and detail, readable without hovering", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await page.goto(`${h.app.url}${ONSET_DAY}`);
      const [fromMs, toMs] = [1789131600000, 1789164000000];
      const { objects, writes } = h.replay.sink;
      const changes = writes.filter((w) => w.timeMs >= fromMs && w.timeMs <= toMs && ["Deployment", "Kustomization"].includes(objects[w.objectIndex].kind));
      expect(changes.length).toBeGreaterThan(0);
      // The detected onset comes from /api/onset, the recorded changes with the markers: wait for both.
      await page
        .waitForFunction(
          (count) => {
            const texts = Array.from(document.querySelectorAll('[data-testid="marker-list"] [data-marker-item]')).map((li) => li.textContent ?? "");
            return texts.filter((t) => t.includes("(recorded change)")).length >= count && texts.some((t) => t.includes("(detected)"));
          },
          changes.length,
          { timeout: 30_000 },
        )
        .catch(() => undefined); // the assertions below say what is missing
      const items = await page.$$eval('[data-testid="marker-list"] [data-marker-item]', (lis) =>
        lis.map((li) => ({ label: li.getAttribute("data-marker-item"), text: li.textContent, visible: li.getBoundingClientRect().height > 0 })),
      );
      for (const m of h.replay.params.markers.filter((m) => m.timeMs >= fromMs && m.timeMs <= toMs)) {
        const item = items.find((i) => i.label === m.label);
        expect(item, m.label).toBeDefined();
        expect(item!.visible).toBe(true);
        expect(item!.text).toContain(formatUtc(m.timeMs));
        expect(item!.text).toContain(m.detail.split("\n")[0]);
      }
      // The generator's rollout and rollback in the range, each listed at its time with its object.
      for (const w of changes) {
        const { kind, namespace, name } = objects[w.objectIndex];
        const item = items.find((i) => i.text?.includes(formatUtc(w.timeMs)) && i.text.includes(`${kind} ${namespace}/${name}`));
        expect(item, `${kind} ${name} at ${formatUtc(w.timeMs)}`).toBeDefined();
        expect(item!.text).toContain("(recorded change)");
        expect(item!.visible).toBe(true);
      }
      // The detected onset is listed too, as detected.
      expect(items.some((i) => i.text?.includes("(detected)"))).toBe(true);
    } finally {
      await page.close();
    }
  });

  it.each([
    ["Write load", ONSET_DAY, '[data-panel="writes-by-resource"]'],
    ["Compare", "/compare?snapshot=replay&from=1789131600000&to=1789164000000", '[data-panel="compare"]'],
    ["Clients", "/clients?snapshot=replay&from=1789131600000&to=1789164000000", "main"],
  ])("on %s, a recorded change's label on the chart opens its diff in the list", async (_page, path, chart) => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await page.goto(`${h.app.url}${path}`);
      const link = page.locator(`${chart} [data-chart-overlay] a[href^="#marker-change-"]`).first();
      await link.waitFor({ timeout: 30_000 });
      const anchor = (await link.getAttribute("href"))!.slice(1);
      const label = await link.locator("[data-marker-label]").getAttribute("data-marker-label");
      await link.click();
      const entry = page.locator(`[id="${anchor}"]`);
      await expect(entry.getAttribute("data-marker-item")).resolves.toBe(label);
      await entry.locator('[data-testid="change-diff"][open]').waitFor({ timeout: 5_000 });
      expect(await entry.isVisible()).toBe(true);
    } finally {
      await page.close();
    }
  });
});
