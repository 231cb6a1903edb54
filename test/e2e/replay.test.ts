/**
 * A fresh `npm start` with nothing configured, in Debian's Chromium: the replay opens with drawn
 * charts, release markers and a banner, its totals equal the generator's counts, and a view can be
 * downloaded as a snapshot and opened again. Screenshots land in test-results/.
 */
import { join } from "node:path";
import { readFileSync, statSync, writeFileSync } from "node:fs";
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { formatCount, formatNumber } from "@/lib/format/number";
import { formatUtc } from "@/lib/format/time";
import { PROJECT_JOB } from "@/lib/demo/types";
import { windowTruth } from "@/lib/demo/truth";
import { ARTIFACTS, BUNDLE_TRANSFER_MS, waitForDrawn } from "../helpers/browser";
import { leastDeltaE } from "../helpers/color-difference";
import { useReplayApp } from "../helpers/replay-app";

const PANELS = ["writes-by-resource", "writes-by-verb", "effective-writes", "write-errors", "lease-renewals", "watch-fanout"];
const h = useReplayApp();

// "attached", not visible: an all-zero series draws a flat line with an empty bounding box.
const waitForCharts = (page: Page) => waitForDrawn(page, PANELS, { state: "attached" });

describe("the replay in Chromium", () => {
  it("opens with drawn charts, markers, a banner and the generator's exact totals", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${h.app.url}/`);
    await page.waitForURL((url) => url.searchParams.get("snapshot") === "replay");
    await waitForCharts(page);
    await expect(page.textContent('[data-testid="snapshot-banner"]')).resolves.toMatch(
      /Replay: .*Snapshot of 2026-09-09 00:00Z → 2026-09-13 06:00Z.*PROMETHEUS_URL=/s,
    );
    // The markers come in their own answer, which may follow the charts'.
    await page.waitForSelector('[data-panel="writes-by-resource"] [data-marker-kind="release"]', { state: "attached" });
    expect(await page.$$eval('[data-panel="writes-by-resource"] [data-marker-kind="release"]', (els) => els.map((e) => e.getAttribute("data-marker")))).toEqual(
      h.replay.params.markers.map((m) => m.label),
    );
    // The detected onset: drawn on the chart, and within one 10-minute step after 13:12Z.
    expect(await page.locator('[data-panel="writes-by-resource"] [data-marker-kind="onset"]').count()).toBe(1);
    await expect(page.textContent('[data-testid="onset-summary"]')).resolves.toMatch(/rose from .* at 2026-09-11 13:(1[2-9]|2[0-2])/);
    expect(await page.inputValue('[data-testid="resource-select"]')).toBe("connectors.networking.datumapis.com");
    // What changed: the generator's infra rollout and rollback, drawn as recorded changes, and the write-up's conclusion
    // reached from them: the rate moved with none, and network-services-operator ran what it had since 7 September.
    const { objects, writes } = h.replay.sink;
    const releaseWrites = writes.filter((w) => ["Deployment", "Kustomization"].includes(objects[w.objectIndex].kind));
    expect(await page.locator('[data-panel="writes-by-resource"] [data-marker-kind="change"]').count()).toBe(releaseWrites.length);
    await page.waitForSelector('[data-testid="changes-summary"] details', { state: "attached" }); // the answer, not its placeholder
    const changes = (await page.textContent('[data-testid="changes-summary"]')) ?? "";
    expect(changes).toContain("network-services-operator: no change since 2026-09-07.");
    expect(changes).toContain("Not a release: the rate rose with none of the recorded changes.");
    expect(changes).not.toContain("the rate moved with it");
    // A change in the list opens to its diff.
    const gateway = page.locator('[data-marker-item="image iroh-gateway v0.1.3 → v0.1.4"] [data-testid="change-diff"]');
    await gateway.locator("summary").click();
    await expect(gateway.locator("pre").textContent()).resolves.toContain(
      "spec.containers[name=manager].image: ghcr.io/datum-cloud/iroh-gateway:v0.1.3 → ghcr.io/datum-cloud/iroh-gateway:v0.1.4",
    );

    // Totals: the project's Connector status PUTs over the whole replay, counted from the generator's requests.
    const { startMs, endMs } = h.replay.params;
    const statusPuts = h.replay.sink.requests.filter(
      (q) => q.job === PROJECT_JOB && q.resource === "connectors" && q.verb === "PUT" && q.subresource === "status" && q.timeMs > startMs && q.timeMs <= endMs,
    ).length;
    const cell = page.locator(
      `[data-testid="totals-table"] tr[data-row="${PROJECT_JOB} connectors.networking.datumapis.com PUT status"] [data-cell="current"]`,
    );
    await expect(cell.textContent()).resolves.toBe(formatCount(statusPuts));
    await page.screenshot({ path: join(ARTIFACTS, "replay.png"), fullPage: true });

    await page.click('[data-testid="snapshot-ranges"] button:has-text("Onset ±2 h")');
    await page.waitForURL((url) => url.searchParams.get("from") === String(h.replay.params.onsetMs - 2 * 3_600_000 - 12 * 60_000));
    await waitForCharts(page);
    await page.screenshot({ path: join(ARTIFACTS, "replay-onset.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("downloads the view as a snapshot and opens it again; a bad file gets a message", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${h.app.url}/`);
    await waitForCharts(page);
    const [download] = await Promise.all([page.waitForEvent("download", { timeout: BUNDLE_TRANSFER_MS }), page.click('[data-testid="download-snapshot"]')]);
    const saved = join(ARTIFACTS, "replay-download.json.gz");
    await download.saveAs(saved);

    await page.setInputFiles('[data-testid="snapshot-file"]', saved);
    // While the server checks it (seconds for the replay's size), the page says what it is checking.
    const opening = page.locator('[data-testid="snapshot-opening"]');
    await opening.waitFor({ timeout: 5_000 });
    const mib = (statSync(saved).size / 1_048_576).toFixed(1);
    expect(await opening.textContent()).toMatch(new RegExp(`^Checking replay-download\\.json\\.gz \\(${mib.replace(".", "\\.")} MiB\\): \\d+ s$`));
    await page.waitForURL((url) => /^[0-9a-f]{16}$/.test(url.searchParams.get("snapshot") ?? ""), { timeout: BUNDLE_TRANSFER_MS });
    await waitForCharts(page);
    await expect(page.textContent('[data-testid="snapshot-banner"]')).resolves.toMatch(/Snapshot of 2026-09-09 00:00Z → 2026-09-13 06:00Z/);

    const bad = join(ARTIFACTS, "not-a-snapshot.json");
    writeFileSync(bad, JSON.stringify({ hello: "world" }));
    await page.setInputFiles('[data-testid="snapshot-file"]', bad);
    await expect(page.locator('[data-testid="snapshot-error"]').textContent()).resolves.toMatch(/Not opened: the file is not a Churnscope snapshot/);
    await page.close();
  });

  it("the compare view reproduces the Connector churn write-up's tables (reconciles vs status PUTs per 3 h, hub vs project writes per 6 h), and counts 12 h windows from the held 6 h ones", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1100 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${h.app.url}/compare`);
    await page.waitForURL((url) => url.searchParams.get("snapshot") === "replay" && url.searchParams.get("window") === "3h");
    const table = async () => {
      // Not updating: while a new window's answer comes, the panel keeps the last one on screen, marked as updating.
      await page.waitForSelector('[data-panel="compare"][data-state="ready"]:not([data-updating]) [data-testid="compare-table"] tr[data-window-end]');
      return page.$$eval('[data-testid="compare-table"] tr[data-window-end]', (trs) =>
        trs.map(
          (tr) =>
            [
              Number(tr.getAttribute("data-window-end")),
              tr.querySelector('[data-cell="a"]')!.textContent,
              tr.querySelector('[data-cell="b"]')!.textContent,
            ] as const,
        ),
      );
    };
    const threeHours = windowTruth(h.replay, 3);
    expect(await table()).toEqual(threeHours.map((w) => [w.endMs, formatCount(w.notReadyReconciles), formatCount(w.statusUpdates)]));
    // A and B in colours anyone tells apart, colour-blind or not.
    const [colorA, colorB] = await page.$$eval('[data-panel="compare"] [data-legend-swatch]', (els) => els.map((e) => getComputedStyle(e).backgroundColor));
    expect(leastDeltaE(colorA, colorB), `${colorA} and ${colorB}`).toBeGreaterThanOrEqual(12);
    // Its CSV: the same windows with the exact counts, and their sums.
    const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="compare-csv"]')]);
    const csv = readFileSync((await download.path())!, "utf8")
      .trim()
      .split("\n")
      .slice(1);
    expect(csv.map((line) => line.split(",").slice(2, 5).map(Number))).toEqual([
      ...threeHours.map((w) => [w.endMs, w.notReadyReconciles, w.statusUpdates]),
      [0, threeHours.reduce((n, w) => n + w.notReadyReconciles, 0), threeHours.reduce((n, w) => n + w.statusUpdates, 0)],
    ]);
    await page.screenshot({ path: join(ARTIFACTS, "replay-compare.png"), fullPage: true });
    // Each preset's words say what its selectors count: the reconciles are those controller-runtime ended with success.
    const presets = await page.$$eval('[data-testid="compare-presets"] button', (bs) => bs.map((b) => b.textContent));
    expect(presets[0]).toMatch(/^Connector reconciles \(success\) vs status PUTs, per 3 h/);
    expect(await page.inputValue('[data-testid="selector-a"]')).toContain('result="success"');

    await page.click('[data-testid="compare-presets"] button:has-text("per 6 h")');
    await page.waitForURL((url) => url.searchParams.get("window") === "6h");
    const sixHours = windowTruth(h.replay, 6);
    await page.waitForSelector(`[data-testid="compare-table"] tr[data-window-end="${sixHours[0].endMs}"]`);
    expect(await table()).toEqual(sixHours.map((w) => [w.endMs, formatCount(w.hubConnectorWrites), formatCount(w.projectConnectorWrites)]));

    // A window the replay does not hold, made of whole held ones: 12 h from the 6 h windows, exact.
    await page.fill('[data-testid="window-input"]', "12h");
    await page.press('[data-testid="window-input"]', "Enter");
    await page.waitForURL((url) => url.searchParams.get("window") === "12h");
    const twelveHours = windowTruth(h.replay, 12);
    await page.waitForSelector(`[data-testid="compare-table"] tr[data-window-end="${twelveHours[0].endMs}"]`);
    expect(await table()).toEqual(twelveHours.map((w) => [w.endMs, formatCount(w.hubConnectorWrites), formatCount(w.projectConnectorWrites)]));
    await expect(page.textContent('[data-panel="compare"] [data-testid="panel-notices"]')).resolves.toMatch(
      /Counted from the snapshot's 6h windows, 2 to each 12h window/,
    );
    // One it cannot count says what it holds, plainly.
    await page.fill('[data-testid="window-input"]', "5h");
    await page.press('[data-testid="window-input"]', "Enter");
    await page.waitForSelector('[data-panel="compare"][data-state="not-held"]');
    await expect(page.textContent('[data-panel="compare"]')).resolves.toMatch(/Not in this snapshot: this snapshot holds only these comparisons/);
    expect(errors).toEqual([]);
    await page.close();
  });
  it("Clients on the replay shows who wrote, before and after the onset, with the generator's counts", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${h.app.url}/`);
    await page.waitForURL((url) => url.searchParams.get("snapshot") === "replay");
    await page.click('nav a:has-text("Clients")');
    await page.waitForURL((url) => url.pathname === "/clients" && url.searchParams.get("snapshot") === "replay");
    await page.waitForSelector('[data-testid="clients-table"] tr[data-client]');
    await expect(page.textContent('[data-testid="snapshot-banner"]')).resolves.toMatch(/Replay: /);

    const { onsetMs } = h.replay.params;
    await page.click(`[data-testid="clients-table"] button:has-text("Compare before/after ${formatUtc(onsetMs, false)}")`);
    await page.waitForURL((url) => url.searchParams.get("at") === String(onsetMs));
    const controller = "system:serviceaccount:network-services-operator-system:network-services-operator · network-services-operator";
    const row = page.locator(`[data-testid="clients-table"] tr[data-client="${controller}"]`);
    await row.locator('[data-cell="before"]').waitFor();
    // The generator's own count of the controller's requests, in the range the page shows.
    const url = new URL(page.url());
    const [from, to] = [Number(url.searchParams.get("from")), Number(url.searchParams.get("to"))];
    const written = h.replay.sink.requests.filter((q) => q.user === controller.split(" · ")[0] && q.timeMs > from && q.timeMs <= to).length;
    expect(await row.locator('[data-cell="writes"]').textContent()).toBe(formatNumber(written, true));
    expect(await row.locator('[data-cell="versions"]').textContent()).toMatch(/^v0\.26\.4 /);

    // Ranked by change, largest rise first, as the generator's requests either side of the onset rank them; the CSV
    // holds the same rows in the same order.
    await page.locator('[data-testid="clients-table"] th').getByRole("button", { name: "change", exact: true }).click();
    await page.waitForURL((u) => u.searchParams.get("writesBy") === "change");
    const onsetFits = Math.min(onsetMs - from, to - onsetMs);
    const onsetWindowMs = onsetFits >= 60_000 ? Math.floor(onsetFits / 60_000) * 60_000 : onsetFits;
    const riseOf = (client: string) => {
      const [user, agentName] = client.split(" · ");
      const theirs = h.replay.sink.requests.filter((q) => q.user === user && q.userAgent.split("/")[0] === agentName);
      const before = theirs.filter((q) => q.timeMs > onsetMs - onsetWindowMs && q.timeMs <= onsetMs).length;
      const after = theirs.filter((q) => q.timeMs > onsetMs && q.timeMs <= onsetMs + onsetWindowMs).length;
      return before === 0 ? (after > 0 ? Number.POSITIVE_INFINITY : Number.NEGATIVE_INFINITY) : (after - before) / before;
    };
    const ranked = await page.locator('[data-testid="clients-table"] tr[data-client]').evaluateAll((rows) => rows.map((r) => r.getAttribute("data-client")!));
    const rises = ranked.map(riseOf);
    expect(
      rises.every((rise, i) => i === 0 || rise <= rises[i - 1]),
      ranked.map((c, i) => `${c} ${rises[i]}`).join("\n"),
    ).toBe(true);
    expect(rises[0]).toBeGreaterThan(0);
    const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="clients-csv"]')]);
    const csv = readFileSync((await download.path())!, "utf8")
      .trim()
      .split("\n");
    expect(csv[0]).toBe("client,user,agent,writes,failed,no-op,changed,before,after,change %");
    expect(csv.slice(1).map((line) => line.split(",")[0])).toEqual(ranked);
    await page.screenshot({ path: join(ARTIFACTS, "replay-clients.png"), fullPage: true });

    // An agent that moved to DatumConnect v0.1.4 in the range: comparing at that version's first write gives its
    // requests in equal windows either side, as the generator wrote them.
    const upgraded = page.locator('[data-testid="clients-table"] tr[data-client]:has([data-version="v0.1.4"]):has([data-version="v0.1.3"])').first();
    const agent = (await upgraded.getAttribute("data-client"))!;
    await upgraded.locator('[data-version="v0.1.4"] button').click();
    await page.waitForURL((u) => u.searchParams.get("at") !== String(onsetMs));
    const atMs = Number(new URL(page.url()).searchParams.get("at"));
    const [user, agentName] = agent.split(" · ");
    const mine = h.replay.sink.requests.filter((q) => q.user === user && q.userAgent.split("/")[0] === agentName);
    // Its first v0.1.4 request in the range is where the comparison sits.
    expect(atMs).toBe(Math.min(...mine.filter((q) => q.userAgent.includes("/v0.1.4") && q.timeMs > from && q.timeMs <= to).map((q) => q.timeMs)));
    const fits = Math.min(atMs - from, to - atMs);
    const windowMs = fits >= 60_000 ? Math.floor(fits / 60_000) * 60_000 : fits;
    const agentRow = page.locator(`[data-testid="clients-table"] tr[data-client="${agent}"]`);
    // The table once it compares at the new time (until then it shows the onset's comparison).
    await page.waitForFunction(
      (text) => document.querySelector('[data-testid="clients-table"]')?.textContent?.includes(text),
      `after ${formatUtc(atMs, false)}`,
    );
    const inWindow = (lo: number, hi: number) => mine.filter((q) => q.timeMs > lo && q.timeMs <= hi).length;
    expect(await agentRow.locator('[data-cell="before"]').textContent()).toBe(formatNumber(inWindow(atMs - windowMs, atMs), true));
    expect(await agentRow.locator('[data-cell="after"]').textContent()).toBe(formatNumber(inWindow(atMs, atMs + windowMs), true));
    expect(errors).toEqual([]);
    await page.close();
  });
});
