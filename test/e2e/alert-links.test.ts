/**
 * Alert links end to end: a real Alertmanager renders the documented template (deploy/alerting/)
 * for a firing and then a resolved alert, and the link in the message opens the intended view
 * in Chromium against `npm start` and a real Prometheus.
 */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatRange } from "@/lib/format/time";
import { startAlertmanager, type TestAlertmanager } from "../helpers/alertmanager";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { launchBrowser, waitForDrawn } from "../helpers/browser";
import { startPrometheus, type TestPrometheus } from "../helpers/prometheus";
import { buildWriteLoadScenario, HUB_JOB, PROJECT_JOB } from "../helpers/write-load-scenario";

const STARTS_AT = "2026-09-11T13:15:00Z";
const HOUR = 3_600_000;

let prom: TestPrometheus;
let app: TestApp;
let alertmanager: TestAlertmanager;
let browser: Browser;

beforeAll(async () => {
  prom = await startPrometheus(buildWriteLoadScenario());
  app = await startApp({
    CHURNSCOPE_CONFIG: writeConfig(
      `prometheus:\n  url: ${prom.url}\n  scrapeIntervalSeconds: 15\napiservers:\n  project: [${PROJECT_JOB}]\n  hub: [${JSON.stringify(HUB_JOB)}]\n`,
    ),
  });
  alertmanager = await startAlertmanager(app.url);
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await alertmanager?.stop();
  await app?.stop();
  await prom?.stop();
});

async function postAlert(endsAt?: string) {
  const alert = {
    labels: { alertname: "ConnectorStatusWritesHigh", job: PROJECT_JOB, resource: "connectors", group: "networking.datumapis.com", severity: "warning" },
    annotations: { summary: "Connector status writes are over five times last week's rate", churnscope_path: "/" },
    startsAt: STARTS_AT,
    ...(endsAt ? { endsAt } : {}),
  };
  const res = await fetch(`${alertmanager.url}/api/v2/alerts`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify([alert]),
  });
  expect(res.status).toBe(200);
}

const linkIn = (text: string) => /Churnscope: (\S+)/.exec(text)?.[1] ?? "";

describe("alert links built by the Alertmanager template", () => {
  it("open the write-load view from an hour before the alert started, on its API server and resource", async () => {
    await postAlert();
    const firing = await alertmanager.nextMessage();
    const link = new URL(linkIn(firing.text));
    expect(link.origin).toBe(app.url);
    expect(Object.fromEntries(link.searchParams)).toEqual({
      from: String(Date.parse(STARTS_AT) - HOUR),
      to: "now",
      apiserver: PROJECT_JOB,
      resource: "connectors.networking.datumapis.com",
    });

    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(link.toString());
    await waitForDrawn(page, "writes-by-verb");
    expect(await page.textContent('[data-testid="resolved-range"]')).toMatch(
      new RegExp(`^${formatRange(Date.parse(STARTS_AT) - HOUR, Date.now()).slice(0, 16)}`),
    );
    expect(await page.inputValue('[data-testid="apiserver-select"]')).toBe(PROJECT_JOB);
    expect(await page.inputValue('[data-testid="resource-select"]')).toBe("connectors.networking.datumapis.com");

    // Resolved: the link freezes the end an hour after the alert ended, and opens exactly that window.
    const endsAt = "2026-09-11T14:40:00Z";
    await postAlert(endsAt);
    const resolved = await alertmanager.nextMessage();
    const frozen = new URL(linkIn(resolved.text));
    expect(frozen.searchParams.get("to")).toBe(String(Date.parse(endsAt) + HOUR));
    await page.goto(frozen.toString());
    await waitForDrawn(page, "writes-by-verb");
    expect(await page.textContent('[data-testid="resolved-range"]')).toBe(`${formatRange(Date.parse(STARTS_AT) - HOUR, Date.parse(endsAt) + HOUR)} (UTC)`);
    expect(errors).toEqual([]);
    await page.close();
  });
});
