/**
 * Audit logs in Chromium: a the HTTPRoute status-patch fix log (a policy controller re-sending every HTTPRoute's status
 * every 10 s) uploaded on the Clients page with its progress bar, then Clients, Objects and a
 * route's timeline show who sent the writes, which changed nothing, and the timer — all against
 * the generator's counts.
 */
import { writeFileSync } from "node:fs";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatNumber } from "@/lib/format/number";
import { startApp, type TestApp } from "../helpers/app";
import { auditEvent, POLICY_AGENT, POLICY_CONTROLLER, seed003 } from "../helpers/audit-log";
import { ARTIFACTS, launchBrowser } from "../helpers/browser";

// Inside the default "last 6 hours", so the pages open on it without a range in the link.
const START = Math.floor((Date.now() - 3 * 3_600_000) / 60_000) * 60_000;
const truth = seed003(START, 60, 3);
// Padding (reads, which are skipped) so the upload takes long enough for its progress to show.
const padding = Array.from({ length: 6_000 }, (_, i) =>
  JSON.stringify(
    auditEvent({
      verb: "list",
      resource: "configmaps",
      namespace: "kube-system",
      receivedMs: START + i,
      responseObject: { kind: "ConfigMapList", items: [{ data: { blob: "y".repeat(3_000) } }] },
    }),
  ),
);
const logPath = join(mkdtempSync(join(tmpdir(), "churnscope-e2e-audit-")), "audit.log");
writeFileSync(logPath, [...padding, ...truth.lines].join("\n"));
const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);

let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  app = await startApp({});
  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe("audit logs in Chromium", () => {
  it("uploads a log with a progress bar, then Clients names the no-op writer", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${app.url}/clients`);
    await page.waitForSelector('[data-testid="clients-chart"][data-state="ready"]');
    await expect(page.textContent("body")).resolves.toContain("No audit log has been ingested");
    // Every state the upload section passes through, and every progress value shown.
    await page.evaluate(() => {
      const seen: string[] = [];
      (window as unknown as { seen: string[] }).seen = seen;
      const section = document.querySelector('[data-testid="audit-upload"]')!;
      new MutationObserver(() => {
        const progress = section.querySelector("progress");
        seen.push(`${section.getAttribute("data-state")}:${progress?.getAttribute("value") ?? ""}`);
      }).observe(section, { attributes: true, subtree: true, childList: true });
    });
    await page.setInputFiles('input[aria-label="audit log file"]', logPath);
    await page.fill('input[aria-label="cluster name"]', "prod-eu");
    await page.click("text=Upload and ingest");
    await page.waitForSelector('[data-testid="upload-summary"]', { timeout: 60_000 });
    const seen = await page.evaluate(() => (window as unknown as { seen: string[] }).seen);
    expect(seen.some((s) => /^uploading:\d+$/.test(s) && Number(s.split(":")[1]) > 0)).toBe(true);
    expect(seen.at(-1)).toMatch(/^done:/);
    // The upload is written to disk chunk by chunk: waiting for each drain must not pile up listeners (Node warns past 10).
    expect(app.running.output()).not.toContain("MaxListenersExceededWarning");
    const requests = sum(truth.requestsByUser);
    await expect(page.textContent('[data-testid="upload-summary"]')).resolves.toContain(`${requests.toLocaleString("en-US")} write requests stored`);

    // The query cache was refreshed: the clients table is there without a reload.
    const policyRow = page.locator(`tr[data-client="${POLICY_CONTROLLER} · ${POLICY_AGENT.split("/")[0]}"]`);
    await policyRow.waitFor();
    await expect(policyRow.locator('[data-cell="writes"]').textContent()).resolves.toBe(truth.requestsByUser[POLICY_CONTROLLER].toLocaleString("en-US"));
    await expect(policyRow.locator('[data-cell="noop"]').textContent()).resolves.toBe(sum(truth.noop).toLocaleString("en-US"));
    expect(await page.locator('[data-testid="clients-chart"] [data-testid="legend"] li').count()).toBe(2);
    // Each legend entry's average is the mean of the series the API gave, with its fraction (a client with
    // 12 writes over the range averages well under one per step).
    const clientsUrl = await page.evaluate(
      () => (performance.getEntriesByType("resource") as PerformanceResourceTiming[]).filter((e) => e.name.includes("/api/clients?")).at(-1)!.name,
    );
    const answer = (await (await fetch(clientsUrl)).json()) as { data: { series: { labels: Record<string, string>; points: [number, number | null][] }[] } };
    const legend = await page.locator('[data-testid="clients-chart"] [data-testid="legend"] li').allTextContents();
    for (const s of answer.data.series) {
      const values = s.points.map(([, v]) => v).filter((v): v is number => v !== null);
      const mean = values.reduce((a, b) => a + b, 0) / values.length;
      expect(legend.find((text) => text.startsWith(s.labels.client))).toContain(`avg ${formatNumber(mean)} writes`);
    }
    expect(legend.some((text) => /avg 0\.\d+ writes/.test(text))).toBe(true);

    // Before/after the middle of the range: the columns appear and the link keeps the split.
    await page.click("text=Compare before/after the middle");
    await policyRow.locator('[data-cell="change"]').waitFor();
    expect(new URL(page.url()).searchParams.get("at")).toMatch(/^\d+$/);
    await page.screenshot({ path: join(ARTIFACTS, "clients.png"), fullPage: true });
    expect(errors).toEqual([]);
    await page.close();
  });

  it("Objects flags each route's 10 s no-op timer, and the timeline shows a no-op write from the audit log", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${app.url}/objects?kind=HTTPRoute&group=gateway.networking.k8s.io`);
    await page.waitForSelector('[data-testid="objects-table"][data-state="ready"] tr[data-object]');
    for (const name of truth.routes) {
      const row = page.locator(`tr[data-object="prod-eu/HTTPRoute/apps/${name}"]`);
      await expect(row.locator('[data-cell="noop"]').textContent()).resolves.toContain(truth.noop[name].toLocaleString("en-US"));
      await expect(row.locator('[data-testid="periodic-noop"]').textContent()).resolves.toBe("every 10 s");
    }
    await page.screenshot({ path: join(ARTIFACTS, "objects-audit.png"), fullPage: true });
    await page.locator('tr[data-object="prod-eu/HTTPRoute/apps/route-0"] a').first().click();
    await page.waitForSelector('[data-testid="timeline"][data-state="ready"] [data-column]');
    const columns = await page.$$eval("[data-column]", (gs) => gs.map((g) => JSON.parse(g.getAttribute("data-classes")!) as Record<string, number>));
    expect(columns.reduce((n, c) => n + (c["no-op"] ?? 0), 0)).toBe(truth.noop["route-0"]);
    // Step from the first write with → until a no-op: it says it changed nothing the profile keeps.
    await page.keyboard.press("ArrowRight");
    for (let i = 0; i < 5 && (await page.locator('[data-testid="diff-class"]').textContent()) !== "no-op"; i++) {
      const place = await page.textContent('[data-testid="diff-place"]');
      await page.keyboard.press("ArrowRight");
      await page.waitForFunction((before) => document.querySelector('[data-testid="diff-place"]')?.textContent !== before, place);
    }
    await expect(page.textContent('[data-testid="diff-class"]')).resolves.toBe("no-op");
    await expect(page.getAttribute('[data-testid="diff-kept"]', "data-kept")).resolves.toBe("no");
    await expect(page.textContent('[data-testid="diff-writer"]')).resolves.toBe(POLICY_CONTROLLER);
    await expect(page.textContent('[data-testid="diff-source"]')).resolves.toContain("source: audit · patch /status");
    await page.screenshot({ path: join(ARTIFACTS, "timeline-audit.png"), fullPage: true });
    await page.close();
  });
});
