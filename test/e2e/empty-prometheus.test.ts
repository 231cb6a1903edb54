/**
 * Live mode against a real Prometheus that does not hold what the Write load page reads: the page
 * says so once, at the top (what it looked for and for which jobs), in Chromium.
 */
import { join } from "node:path";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { ARTIFACTS, launchBrowser } from "../helpers/browser";
import { startPrometheus, type TestPrometheus } from "../helpers/prometheus";

const START_S = Date.parse("2026-09-11T12:00:00Z") / 1000;
const STEPS = 240;
const ranged = (fromS: number, toS: number) => `from=${fromS * 1000}&to=${toS * 1000}`;

let prom: TestPrometheus;
let configured: TestApp;
let discovering: TestApp;
let browser: Browser;

beforeAll(async () => {
  // Write requests of another API server only, an hour of them.
  const values = Float64Array.from({ length: STEPS }, (_, i) => i * 30);
  prom = await startPrometheus([
    {
      name: "apiserver_request_total",
      labels: { job: "staging-apiserver", verb: "PUT", group: "", resource: "configmaps", subresource: "", code: "200" },
      startSeconds: START_S,
      intervalSeconds: 15,
      values,
    },
  ]);
  [configured, discovering] = await Promise.all([
    startApp({ CHURNSCOPE_CONFIG: writeConfig(`prometheus:\n  url: ${prom.url}\n  scrapeIntervalSeconds: 15\napiservers:\n  project: [milo-apiserver]\n`) }),
    startApp({ CHURNSCOPE_CONFIG: writeConfig(`prometheus:\n  url: ${prom.url}\n  scrapeIntervalSeconds: 15\n`) }),
  ]);
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await Promise.all([configured?.stop(), discovering?.stop()]);
  await prom?.stop();
});

async function notice(app: TestApp, range: string, shot: string): Promise<string[]> {
  const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
  try {
    await page.goto(`${app.url}/?${range}`);
    await page.waitForSelector('[data-panel="writes-by-resource"][data-state]:not([data-state="loading"])', { timeout: 30_000 });
    await page.waitForLoadState("networkidle");
    await page.screenshot({ path: join(ARTIFACTS, `empty-prometheus-${shot}.png`) });
    return await page.$$eval('[data-testid="request-metrics-missing"]', (els) => els.map((e) => e.textContent ?? ""));
  } finally {
    await page.close();
  }
}

describe("a Prometheus without the API servers' request counter", () => {
  it("names the configured jobs it lacks, and the jobs that have it", async () => {
    const texts = await notice(configured, ranged(START_S, START_S + STEPS * 15), "configured");
    expect(texts).toEqual([
      "Prometheus has no apiserver_request_total in this range for milo-apiserver (the jobs configured in apiservers): the panels read it, so they show no data for it. It has it for staging-apiserver.",
    ]);
  });

  it("says when no job has it at all, and says nothing where it is there", async () => {
    const before = await notice(discovering, ranged(START_S - 7200, START_S - 3600), "none");
    expect(before).toEqual([
      "Prometheus has no apiserver_request_total in this range under any job: every panel on this page reads it. Check that it scrapes the API servers' /metrics.",
    ]);
    expect(await notice(discovering, ranged(START_S, START_S + STEPS * 15), "present")).toEqual([]);
  });
});
