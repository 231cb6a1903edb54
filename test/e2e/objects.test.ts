/**
 * Object churn on the replay in Debian's Chromium: the Objects ranking leads to
 * demos-md21mk/datum-connect-bpb8q, whose timeline shows its writes, its one routed flip and a diff
 * naming the field and the writer; Field churn names the modelled churning fields and their writers.
 */
import { join } from "node:path";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { NAMED } from "@/lib/demo/params";
import { fieldTruth } from "@/lib/demo/truth";
import { ARTIFACTS } from "../helpers/browser";
import { leastDeltaE } from "../helpers/color-difference";
import { useReplayApp } from "../helpers/replay-app";

const h = useReplayApp();

/** Holds the page's answers from matching URLs (each fetched from the server at once) until released, to see what it shows meanwhile. */
async function holdAnswers(page: Page, url: RegExp): Promise<() => void> {
  let release = () => {};
  const released = new Promise<void>((resolve) => (release = resolve));
  await page.route(url, async (route) => {
    const response = await route.fetch();
    await released;
    await route.fulfill({ response });
  });
  return release;
}

/** A view waiting for its store answer says so, rather than showing an empty table (which reads as "nothing changed"). */
async function expectStoreLoading(page: Page, view: string): Promise<void> {
  const note = page.locator(`[data-testid="${view}"][data-state="loading"] [data-testid="store-loading"]`);
  await note.waitFor();
  await expect(note.textContent()).resolves.toContain("the first visit to a snapshot builds its object store");
  expect(await page.locator(`[data-testid="${view}"]`).textContent()).not.toMatch(/No (object writes|field changes)/);
}

describe("object churn views on the replay in Chromium", () => {
  it("ranks Connectors, opens bpb8q's timeline and shows a write's diff", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const releaseRanking = await holdAnswers(page, /\/api\/objects\?/);
    await page.goto(`${h.app.url}/objects`);
    await page.waitForURL((url) => url.searchParams.get("snapshot") === "replay" && url.searchParams.get("kind") === "Connector");
    await expectStoreLoading(page, "objects-table");
    // No page count before there is an answer to count.
    await expect(page.textContent('[data-testid="page-status"]')).resolves.toBe("page 1");
    releaseRanking();
    await page.waitForSelector('[data-testid="objects-table"][data-state="ready"] tr[data-object]', { timeout: 60_000 });
    const connectors = new Set(h.replay.sink.writes.map((w) => w.objectIndex).filter((i) => h.replay.sink.objects[i].kind === "Connector")).size;
    await expect(page.textContent('[data-testid="page-status"]')).resolves.toBe(
      `page 1 of ${Math.ceil(connectors / 50)} · ${connectors.toLocaleString("en-US")} objects`,
    );
    const first = page.locator('[data-testid="objects-table"] tr[data-object]').first();
    await expect(first.getAttribute("data-object")).resolves.toBe(`milo/Connector/${NAMED.project}/${NAMED.flipsThenFlaps}`);
    await expect(first.locator('[data-cell="fields"]').textContent()).resolves.toContain("status.conditions[type=Ready].message");
    await page.screenshot({ path: join(ARTIFACTS, "objects.png"), fullPage: true });

    const releaseWrites = await holdAnswers(page, /\/api\/objects\/.*\/timeline\?/);
    await first.locator("a").first().click();
    await expectStoreLoading(page, "timeline");
    // Never "0 writes", nor an "unknown" projection band, while they load.
    expect(await page.locator('[data-testid="write-counts"]').count()).toBe(0);
    expect(await page.locator('[data-testid="timeline"] svg').count()).toBe(0);
    releaseWrites();
    await page.waitForURL((url) => url.pathname === `/objects/milo/networking.datumapis.com/Connector/${NAMED.project}/${NAMED.flipsThenFlaps}`);
    await page.waitForSelector('[data-testid="timeline"][data-state="ready"] [data-column]');
    const index = h.replay.sink.objects.findIndex((o) => o.cluster === "milo" && o.kind === "Connector" && o.name === NAMED.flipsThenFlaps);
    const range = new URL(page.url());
    const [fromMs, toMs] = [Number(range.searchParams.get("from")), Number(range.searchParams.get("to"))];
    const truth = h.replay.sink.writes.filter((w) => w.objectIndex === index && w.timeMs > fromMs && w.timeMs <= toMs);
    // Every write of the range is drawn, counted into its pixel column, by class.
    const columns = await page.$$eval("[data-column]", (gs) => gs.map((g) => JSON.parse(g.getAttribute("data-classes")!) as Record<string, number>));
    const sum = (cls?: string) => columns.reduce((n, c) => n + (cls ? (c[cls] ?? 0) : Object.values(c).reduce((a, b) => a + b, 0)), 0);
    expect(sum()).toBe(truth.length);
    expect(sum("routed")).toBe(truth.filter((w) => w.cls === "routed").length);
    expect(await page.$$eval("[data-band]", (els) => els.map((e) => e.getAttribute("data-band")))).toEqual(
      expect.arrayContaining([expect.stringMatching(/^online=true nodeId=/), "online=false nodeId=—"]),
    );

    // Click the timeline where an unrouted write is: the view picks the nearest write there.
    const unrouted = truth.filter((w) => w.cls === "unrouted")[40];
    const svg = (await page.locator('[data-testid="timeline"] svg').boundingBox())!;
    const labelWidth = 260;
    const plot = svg.width - labelWidth;
    // A whole pixel (what the browser's pointer reports), and the time it stands for.
    const clickX = Math.round(svg.x + labelWidth + ((unrouted.timeMs - fromMs) / (toMs - fromMs)) * plot);
    const clickedMs = fromMs + ((clickX - svg.x - labelWidth) / plot) * (toMs - fromMs);
    await page.mouse.click(clickX, svg.y + svg.height - 30);
    await page.waitForSelector('[data-testid="diff"] tr[data-change]');
    const writer = await page.textContent('[data-testid="diff-writer"]');
    expect(["network-services-operator", "datum-connect"]).toContain(writer);
    // The picked write is the one nearest the click.
    const pickedMs = Number(await page.getAttribute('[data-testid="diff-time"]', "data-ts"));
    const nearest = Math.min(...truth.map((w) => Math.abs(w.timeMs - clickedMs)));
    expect(Math.abs(pickedMs - clickedMs)).toBeCloseTo(nearest, -1);
    await page.screenshot({ path: join(ARTIFACTS, "object-timeline.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("names the churning fields and their writers", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    const { startMs, endMs } = h.replay.params;
    const release = await holdAnswers(page, /\/api\/fields\?/);
    await page.goto(`${h.app.url}/fields?snapshot=replay&from=${startMs}&to=${endMs}&cluster=milo&group=networking.datumapis.com&kind=Connector`);
    await expectStoreLoading(page, "fields-table");
    release();
    await page.waitForSelector('[data-testid="fields-table"][data-state="ready"] tr[data-field]', { timeout: 60_000 });
    const truth = fieldTruth(h.replay).filter((f) => f.cluster === "milo" && f.kind === "Connector");
    const shown = await page.$$eval("tr[data-field]", (rows) =>
      rows.slice(0, 2).map((r) => [r.getAttribute("data-field"), [...r.querySelectorAll("[data-writer]")].map((w) => w.getAttribute("data-writer"))]),
    );
    expect(shown).toEqual(truth.slice(0, 2).map((f) => [f.path, Object.keys(f.writers)]));
    expect(shown[0][0]).toBe("status.conditions[type=Ready].message");
    // Its writers (the main ones first) are told apart by anyone, colour-blind or not.
    const swatches = await page.$$eval("[data-legend-swatch]", (els) =>
      els.map((e) => [e.getAttribute("data-legend-swatch")!, getComputedStyle(e).backgroundColor]),
    );
    expect(swatches.map(([writer]) => writer).slice(0, 2)).toEqual([shown[0][1]![0], shown[1][1]![0]]);
    for (let i = 0; i < Math.min(3, swatches.length); i++)
      for (let j = i + 1; j < Math.min(3, swatches.length); j++)
        expect(leastDeltaE(swatches[i][1], swatches[j][1]), `${swatches[i]} beside ${swatches[j]}`).toBeGreaterThanOrEqual(12);
    await page.screenshot({ path: join(ARTIFACTS, "field-churn.png"), fullPage: true });
    await page.close();
  });
});
