/**
 * What real controllers get wrong, in Chromium: the real Linkerd policy controller's log from before its fix
 * (../shared/recordings/linkerd-12104) uploaded; Objects shows the restamped clocks, the echoes and the sentence with
 * the figures an independent reading of the raw log gives (test/helpers/count_clocks.py), and an example opens its
 * write on the route's timeline, marked. Screenshots on a laptop and a phone.
 */
import { spawnSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, uploadAudit, writeConfig, type TestApp } from "../helpers/app";
import { ARTIFACTS, launchBrowser } from "../helpers/browser";
import { ROOT } from "../helpers/root";
import { sharedData } from "../helpers/shared-data";

const LOG = sharedData(join("recordings", "linkerd-12104", "before-fix.audit.log.gz"));
const CONTROLLER = "system:serviceaccount:linkerd:linkerd-destination";
const lines = gunzipSync(readFileSync(LOG)).toString("utf8").trim().split("\n");
const times = lines.map((l) => Date.parse((JSON.parse(l) as { requestReceivedTimestamp: string }).requestReceivedTimestamp));
// The recording's own minutes, whatever today is.
const FROM = Math.floor(Math.min(...times) / 60_000) * 60_000;
const TO = Math.ceil(Math.max(...times) / 60_000) * 60_000 + 60_000;

let app: TestApp;
let browser: Browser;
let truth: { writes: Record<string, { echo: number; clockOnly: number }>; clocks: Record<string, [number, number]> };

beforeAll(async () => {
  const run = spawnSync("python3", [join(ROOT, "test", "helpers", "count_clocks.py"), "--resource", "httproutes.policy.linkerd.io", LOG], { encoding: "utf8" });
  if (run.status !== 0) throw new Error(`count_clocks.py failed: ${run.stderr ?? run.error?.message}`);
  truth = JSON.parse(run.stdout);
  // A recording from the past: kept however old it is.
  app = await startApp({ CHURNSCOPE_CONFIG: writeConfig("recorder: { retentionDays: 3650 }") });
  const uploaded = await uploadAudit(app.url, readFileSync(LOG), "linkerd-test");
  expect(uploaded.status, await uploaded.clone().text()).toBe(200);
  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe("what the Linkerd policy controller got wrong, on Objects", () => {
  it("shows the restamped clocks and the echoes per writer with the raw log's figures, and opens an example on its timeline", async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${app.url}/objects?from=${FROM}&to=${TO}&group=policy.linkerd.io&kind=HTTPRoute`);
    const clocks = page.locator('[data-testid="clock-faults"][data-state="ready"]');
    await clocks.waitFor();
    const [writes, objects] = truth.clocks[`HTTPRoute|Accepted|restamped|${CONTROLLER}`];
    const row = clocks.locator(`tr[data-clock="HTTPRoute|Accepted|restamped|${CONTROLLER}"]`);
    const number = async (cell: string) => Number((await row.locator(`[data-cell="${cell}"]`).textContent())!.replace(/,/g, ""));
    expect(await number("writes")).toBe(writes);
    expect(await number("objects")).toBe(objects);
    const echoRow = clocks.locator(`[data-testid="echo-table"] tr[data-writer="${CONTROLLER}"]`);
    expect(Number((await echoRow.locator('[data-cell="echoes"]').textContent())!.replace(/,/g, ""))).toBe(truth.writes[CONTROLLER].echo);
    expect(Number((await echoRow.locator('[data-cell="clock-only"]').textContent())!.replace(/,/g, ""))).toBe(truth.writes[CONTROLLER].clockOnly);
    await expect
      .poll(() => clocks.locator('[data-testid="clock-sentences"]').textContent())
      .toContain(`Accepted's lastTransitionTime moved ${writes.toLocaleString("en-US")} times on ${objects} HTTPRoutes`);
    await page.screenshot({ path: join(ARTIFACTS, "objects-writer-faults.png"), fullPage: true });
    // The Objects table as CSV holds what it shows: each route's writes.
    const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="objects-csv"]')]);
    const csv = readFileSync((await download.path())!, "utf8")
      .trim()
      .split("\n");
    expect(csv[0].split(",").slice(0, 6)).toEqual(["cluster", "group", "kind", "namespace", "name", "writes"]);
    for (const line of csv.slice(1)) {
      const [, , , namespace, name, writes] = line.split(",");
      const cell = page.locator(`tr[data-object="linkerd-test/HTTPRoute/${namespace}/${name}"] [data-cell="writes"]`);
      expect(Number((await cell.textContent())!.replace(/,/g, "")), name).toBe(Number(writes));
    }
    expect(csv.length - 1).toBe(20);

    // The example opens its write on the route's timeline, where the echoes and restamped clocks are marked.
    await row.locator("a").click();
    await page.waitForURL(/\/objects\/linkerd-test\/policy\.linkerd\.io\/HTTPRoute\/demo\/route-\d+\?.*write=\d+/);
    await page.locator('[data-testid="diff-traits"]').waitFor();
    expect(await page.locator('[data-testid="diff-traits"]').textContent()).toContain("Accepted: its lastTransitionTime moved while its status stayed");
    await page.locator('[data-testid="marks-row"]').waitFor();
    await page.screenshot({ path: join(ARTIFACTS, "timeline-marks.png"), fullPage: true });
    expect(errors).toEqual([]);
  });

  it("reads on a phone: the sentence first, the tables scroll within their boxes", async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 }, isMobile: true, hasTouch: true });
    await page.goto(`${app.url}/objects?from=${FROM}&to=${TO}&group=policy.linkerd.io&kind=HTTPRoute`);
    const clocks = page.locator('[data-testid="clock-faults"][data-state="ready"]');
    await clocks.waitFor();
    await clocks.scrollIntoViewIfNeeded();
    // Nothing on the page is wider than the phone: wide tables scroll inside their own boxes.
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.screenshot({ path: join(ARTIFACTS, "objects-writer-faults-phone.png"), fullPage: true });
  });
});
