/**
 * Every API call on the Clients page, in Chromium: a log of reads, watches and writes of a controller and its node
 * agents, v0.8.0 then v0.9.0, uploaded; the API cost table, its ranking by any column, a component's calls by verb, the
 * comparison's sentence and the CSV, each against the generator's own record of what it wrote.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, uploadAudit, type TestApp } from "../helpers/app";
import { callsLog, type LogClient } from "../helpers/api-calls-log";
import { ARTIFACTS, launchBrowser } from "../helpers/browser";

// Inside the default "last 6 hours", minute-aligned: the page opens on it without a range in the link.
const START = Math.floor((Date.now() - 3 * 3_600_000) / 60_000) * 60_000;
const agents = (version: string): LogClient[] =>
  Array.from({ length: 4 }, (_, i) => ({ user: `system:serviceaccount:unbounded-net:node-${i}`, agent: "unbounded-net-node", version }));
const controller = (version: string): LogClient => ({ user: "system:serviceaccount:unbounded-net:controller", agent: "unbounded-net-controller", version });
// An hour of v0.8.0, then an hour of v0.9.0, whose agents call half as often (two of four).
const before = callsLog(START, 60, [...agents("v0.8.0"), controller("v0.8.0")], 21);
const after = callsLog(START + 3_600_000, 60, [...agents("v0.9.0").slice(0, 2), controller("v0.9.0")], 22);
const logPath = join(mkdtempSync(join(tmpdir(), "churnscope-e2e-calls-")), "audit.log");
writeFileSync(logPath, [...before.lines, ...after.lines].join("\n"));
const callsOf = (log: typeof before, agent: string) =>
  log.calls.filter((c) => c.client.agent === agent).length + log.watches.filter((w) => w.client.agent === agent).length;
const readsOf = (log: typeof before, agent: string) =>
  log.calls.filter((c) => c.client.agent === agent && ["get", "list"].includes(c.verb) && !c.target.startsWith("/")).length +
  log.watches.filter((w) => w.client.agent === agent).length;

let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  app = await startApp({});
  const uploaded = await uploadAudit(app.url, readFileSync(logPath));
  expect(uploaded.status).toBe(200);
  browser = await launchBrowser();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await app?.stop();
});

describe("API calls on Clients", () => {
  it("shows each component's calls, ranks by any column, draws a component's calls by verb and compares the versions in a sentence", async () => {
    const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const from = START;
    const to = START + 7_200_000;
    await page.goto(`${app.url}/clients?from=${from}&to=${to}&at=${START + 3_600_000}`);
    const table = page.locator('[data-testid="api-cost-table"]');
    await table.waitFor();
    const cellOf = async (component: string, column: string) =>
      Number((await table.locator(`tr[data-component="${component}"] [data-cell="${column}"]`).textContent())!.replace(/,/g, ""));
    for (const agent of ["unbounded-net-node", "unbounded-net-controller"]) {
      expect(await cellOf(agent, "calls"), agent).toBe(callsOf(before, agent) + callsOf(after, agent));
      expect(await cellOf(agent, "reads"), agent).toBe(readsOf(before, agent) + readsOf(after, agent));
      expect(await cellOf(agent, "before"), agent).toBe(callsOf(before, agent));
      expect(await cellOf(agent, "after"), agent).toBe(callsOf(after, agent));
    }
    // What changed, in one sentence per component, with the change the table's counts give.
    const pct = (b: number, a: number) => `${a < b ? "−" : "+"}${Math.abs(((a - b) / b) * 100).toFixed(1)} %`;
    const sentence = await page.locator('[data-testid="api-cost-changes"] li[data-component="unbounded-net-node"]').textContent();
    expect(sentence).toContain(`unbounded-net-node: ${pct(callsOf(before, "unbounded-net-node"), callsOf(after, "unbounded-net-node"))} of API calls`);
    // Ranked by change: the largest fall first.
    await table.locator('th button:has-text("change")').click();
    await page.waitForURL(/sort=change/);
    const order = await table.locator("tbody tr[data-component]").evaluateAll((rows) => rows.map((r) => r.getAttribute("data-component")));
    expect(order[0]).toBe("unbounded-net-node");
    // A component's calls by verb.
    await table.locator('tr[data-component="unbounded-net-controller"] button:has-text("unbounded-net-controller")').click();
    await page.waitForURL(/client=unbounded-net-controller/);
    await expect.poll(() => page.locator('[data-testid="api-cost-chart"]').textContent()).toContain("unbounded-net-controller");
    // The CSV holds what the table shows.
    const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-testid="api-cost-csv"]')]);
    const csv = readFileSync((await download.path())!, "utf8")
      .trim()
      .split("\n");
    const nodeRow = csv.find((line) => line.startsWith("unbounded-net-node,,"))!;
    expect(nodeRow.split(",")[2]).toBe(String(callsOf(before, "unbounded-net-node") + callsOf(after, "unbounded-net-node")));
    await page.screenshot({ path: join(ARTIFACTS, "clients-api-cost.png"), fullPage: true });
    expect(errors).toEqual([]);
  });
});
