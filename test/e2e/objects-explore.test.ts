/**
 * Objects and Field churn on the replay in Chromium: heartbeat-only objects (Leases only renewed) are hidden by a
 * default toggle and counted, columns sort, field paths show whole on hover, and Field churn picks its kind and
 * cluster, splits each field's changes into routed and unrouted, and draws them over the range, each number as the
 * generator's own record of its writes gives it.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { diffObjects } from "@/lib/churn/diff";
import type { Json } from "@/lib/churn/json";
import { ARTIFACTS } from "../helpers/browser";
import { useReplayApp } from "../helpers/replay-app";

const h = useReplayApp();

async function table(page: Page) {
  await page.waitForSelector('[data-testid="objects-table"][data-state="ready"]:not([data-updating]) tr[data-object]', { timeout: 60_000 });
  return page.$$eval("tr[data-object]", (rows) =>
    rows.map((r) => ({
      key: r.getAttribute("data-object")!,
      // The count itself, not the "besides heartbeats" line under it.
      writes: Number(r.querySelector('[data-cell="writes"]')!.firstChild!.textContent!.replace(/,/g, "")),
      routed: Number(r.querySelector('[data-cell="routed"]')!.textContent!.replace(/,/g, "")),
      heartbeats: Number(r.getAttribute("data-heartbeats")),
    })),
  );
}

/** Per object of the replay: its writes in the range and whether every one of them was a Lease renewal and nothing else. */
function heartbeatTruth() {
  const { startMs, endMs } = h.replay.params;
  const byObject = new Map<number, { writes: number; beats: number }>();
  for (const w of h.replay.sink.writes) {
    if (w.timeMs <= startMs || w.timeMs > endMs) continue;
    const entry = byObject.get(w.objectIndex) ?? { writes: 0, beats: 0 };
    entry.writes++;
    if (w.cause === "heartbeat") entry.beats++;
    byObject.set(w.objectIndex, entry);
  }
  const only = [...byObject.values()].filter((e) => e.beats === e.writes);
  return { objects: byObject.size, heartbeatOnly: only.length, heartbeatWrites: only.reduce((n, e) => n + e.writes, 0) };
}

describe("Objects and Field churn on the replay", () => {
  it("hides heartbeat-only objects by default and says how many, sorts by any column, and shows whole field paths on hover", async () => {
    const { startMs, endMs } = h.replay.params;
    const truth = heartbeatTruth();
    expect(truth.heartbeatOnly).toBeGreaterThan(0);
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await page.goto(`${h.app.url}/objects?snapshot=replay&from=${startMs}&to=${endMs}`);
      const ranked = await table(page);
      expect(await page.isChecked('[data-testid="hide-heartbeats"]')).toBe(true);
      // Ranked by the writes besides heartbeats: a Lease renewed 15,000 times but re-acquired 600 times ranks by the 600.
      for (let i = 1; i < ranked.length; i++)
        expect(ranked[i].writes - ranked[i].heartbeats, ranked[i].key).toBeLessThanOrEqual(ranked[i - 1].writes - ranked[i - 1].heartbeats);
      expect(ranked.some((r) => r.heartbeats > r.writes / 2)).toBe(true);
      await expect(page.textContent('[data-testid="heartbeat-only"]')).resolves.toContain(
        `${truth.heartbeatOnly.toLocaleString("en-US")} heartbeat-only object${truth.heartbeatOnly === 1 ? "" : "s"} (every write a heartbeat, as Lease renewals are) with ${truth.heartbeatWrites.toLocaleString("en-US")} writes hidden; the others rank by their writes besides heartbeats`,
      );
      await expect(page.textContent('[data-testid="page-status"]')).resolves.toMatch(
        new RegExp(`· ${(truth.objects - truth.heartbeatOnly).toLocaleString("en-US")} objects$`),
      );
      await page.screenshot({ path: join(ARTIFACTS, "objects-heartbeats-hidden.png"), fullPage: true });

      // Sorting by routed writes: the column never rises down the page, and the header says so.
      await page.click('[data-sort="routed"]');
      await page.waitForURL((u) => u.searchParams.get("sort") === "routed");
      const byRouted = await table(page);
      for (let i = 1; i < byRouted.length; i++) expect(byRouted[i].routed).toBeLessThanOrEqual(byRouted[i - 1].routed);
      await expect(page.getAttribute('th:has([data-sort="routed"])', "aria-sort")).resolves.toBe("descending");
      await page.click('[data-sort="name"]');
      await page.waitForURL((u) => u.searchParams.get("sort") === "name");
      const byName = (await table(page)).map((r) => r.key.split("/").slice(2).join("/"));
      expect(byName).toEqual([...byName].sort((a, b) => a.localeCompare(b)));

      // Every field path shown cut is whole in its hover text.
      const cells = await page.$$eval('[data-cell="fields"] div', (divs) => divs.map((d) => ({ title: d.getAttribute("title"), text: d.textContent })));
      expect(cells.length).toBeGreaterThan(0);
      for (const c of cells) expect(c.text!.startsWith(`${c.title} ×`)).toBe(true);

      // Shown again: every object, the heartbeat-only ones among them.
      await page.click('[data-testid="heartbeat-only"] button');
      await page.waitForURL((u) => u.searchParams.get("heartbeats") === "show");
      await table(page);
      await expect(page.textContent('[data-testid="page-status"]')).resolves.toMatch(new RegExp(`· ${truth.objects.toLocaleString("en-US")} objects$`));
      expect(await page.isChecked('[data-testid="hide-heartbeats"]')).toBe(false);
    } finally {
      await page.close();
    }
  });

  it("Field churn picks its kind and cluster, and splits each field's changes into routed and unrouted, over time", async () => {
    const { startMs, endMs } = h.replay.params;
    const { sink } = h.replay;
    // The generator's record: each write's changed paths, with the write's class.
    const current = sink.initial.map((o) => (o === null ? undefined : (o as Json)));
    const truth = new Map<string, { changes: number; routed: number; unrouted: number; over: number[] }>();
    // 40 equal slices of the range, each (start, end].
    const slice = (t: number) => Math.min(39, Math.floor(((t - startMs - 1) * 40) / (endMs - startMs)));
    for (const w of sink.writes) {
      const ref = sink.objects[w.objectIndex];
      const after = w.object === null ? undefined : (w.object as Json);
      if (ref.cluster === "milo" && ref.kind === "Connector" && w.cls !== "create" && w.cls !== "delete" && w.timeMs > startMs && w.timeMs <= endMs)
        for (const change of diffObjects(current[w.objectIndex], after)) {
          const entry = truth.get(change.path) ?? { changes: 0, routed: 0, unrouted: 0, over: new Array<number>(40).fill(0) };
          entry.changes++;
          entry.over[slice(w.timeMs)]++;
          if (w.cls === "routed") entry.routed++;
          else entry.unrouted++;
          truth.set(change.path, entry);
        }
      current[w.objectIndex] = after;
    }
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await page.goto(`${h.app.url}/fields?snapshot=replay&from=${startMs}&to=${endMs}`);
      await page.waitForSelector('[data-testid="fields-table"][data-state="ready"] tr[data-field]', { timeout: 60_000 });
      await page.selectOption('[data-testid="cluster-select"]', "milo");
      await page.waitForURL((u) => u.searchParams.get("cluster") === "milo");
      await page.selectOption('[data-testid="kind-select"]', "networking.datumapis.com/Connector");
      await page.waitForURL((u) => u.searchParams.get("kind") === "Connector" && u.searchParams.get("group") === "networking.datumapis.com");
      await page.waitForSelector('[data-testid="fields-table"][data-state="ready"]:not([data-updating]) tr[data-field]');
      await expect(page.textContent('[data-testid="fields-scope"]')).resolves.toBe("Connector on milo");
      const shown = await page.$$eval("tr[data-field]", (rows) =>
        rows.map((r) => ({
          path: r.getAttribute("data-field")!,
          changes: Number(r.querySelector('[data-cell="changes"]')!.textContent!.replace(/,/g, "")),
          routed: Number(r.querySelector('[data-cell="routed"]')!.textContent!.replace(/,/g, "")),
          unrouted: Number(r.querySelector('[data-cell="unrouted"]')!.textContent!.replace(/,/g, "")),
          over: r.querySelector('[data-cell="sparkline"]')!.getAttribute("data-values")!.split(",").map(Number),
        })),
      );
      expect(shown.length).toBe(truth.size);
      for (const row of shown) {
        expect({ path: row.path, ...truth.get(row.path) }).toEqual(row);
      }
      await page.screenshot({ path: join(ARTIFACTS, "field-churn-scoped.png"), fullPage: true });
    } finally {
      await page.close();
    }
  });
});
