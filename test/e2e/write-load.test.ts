/**
 * The Write load page in Debian's Chromium against `npm start` and a real Prometheus: charts draw,
 * the totals table shows the generator's exact counts, range changes go to the URL, and reloading
 * the URL reproduces the view. Screenshots land in test-results/.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, BrowserContext, Page, Request } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { joinResource } from "@/lib/panels/resource-name";
import { formatCount, formatValue } from "@/lib/format/number";
import type { CounterSeries } from "@/lib/scenario/counters";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { ARTIFACTS, launchBrowser, waitForDrawn } from "../helpers/browser";
import { startPrometheus, type TestPrometheus } from "../helpers/prometheus";
import { buildWriteLoadScenario, HUB_JOB, LEGACY_JOB, PROJECT_JOB, truthByKey, writesOf } from "../helpers/write-load-scenario";

const FROM_MS = Date.parse("2026-09-11T12:00:00Z");
const TO_MS = Date.parse("2026-09-11T16:00:00Z");

let series: CounterSeries[];
let prom: TestPrometheus;
let app: TestApp;
let browser: Browser;

beforeAll(async () => {
  series = buildWriteLoadScenario();
  prom = await startPrometheus(series);
  app = await startApp({
    CHURNSCOPE_CONFIG: writeConfig(
      `prometheus:\n  url: ${prom.url}\n  scrapeIntervalSeconds: 15\napiservers:\n  project: [${PROJECT_JOB}, ${LEGACY_JOB}]\n  hub: [${JSON.stringify(HUB_JOB)}]\n` +
        "markers:\n  - { time: '2026-09-11T14:45:00Z', label: infra v0.83.42, detail: reached stable sites }\n",
    ),
  });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await prom?.stop();
});

async function totalsRows(page: Page): Promise<Map<string, string>> {
  await page.waitForSelector(
    '[data-panel="write-totals"][data-state="ready"]:not([data-updating]) [data-testid="totals-table"] tr[data-row] [data-cell="previous"]:not(:text("…"))',
    { timeout: 30_000 },
  );
  const rows = await page.$$eval('[data-testid="totals-table"] tr[data-row]', (trs) =>
    trs.map((tr) => [tr.getAttribute("data-row")!, tr.querySelector('[data-cell="current"]')!.textContent!.trim()] as [string, string]),
  );
  return new Map(rows);
}

describe("Write load page in Chromium", () => {
  it("draws the charts and shows exact totals; range changes go to the URL; reload reproduces the view", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const link = `${app.url}/?from=${FROM_MS}&to=${TO_MS}&apiserver=${PROJECT_JOB}&resource=connectors.networking.datumapis.com`;
    await page.goto(link);
    await waitForDrawn(page, ["writes-by-resource", "writes-by-verb", "effective-writes", "write-errors", "lease-renewals", "watch-fanout"]);

    // Totals table = the generator's exact counts (aligned range; see the integration test for why exact).
    const truth = truthByKey(
      series,
      writesOf(PROJECT_JOB),
      (l) => [joinResource(l.resource, l.group), l.verb, l.subresource ?? ""].join(" ").trim(),
      FROM_MS / 1000,
      TO_MS / 1000,
    );
    const shown = await totalsRows(page);
    expect(shown.size).toBe(truth.size);
    for (const [key, count] of truth) expect(shown.get(key), key).toBe(formatCount(count));
    await expect(page.textContent('[data-testid="totals-sum"]')).resolves.toBe(formatCount([...truth.values()].reduce((a, b) => a + b, 0)));
    expect(await page.inputValue('[data-testid="resource-select"]')).toBe("connectors.networking.datumapis.com");
    // The configured release marker is on every chart, with its detail as the tooltip.
    // Each chart and the markers come in answers of their own: counted once all are in.
    await expect.poll(() => page.locator('[data-panel][data-state="loading"], [data-panel][data-updating]').count(), { timeout: 15_000 }).toBe(0);
    await expect
      .poll(async () => (await page.locator("[data-chart]").count()) - (await page.locator("[data-chart][data-drawn]").count()), { timeout: 15_000 })
      .toBe(0);
    const drawn = await page.locator("[data-chart][data-drawn]").count();
    expect(drawn).toBeGreaterThanOrEqual(8);
    await expect.poll(() => page.locator('[data-marker="infra v0.83.42"][data-marker-kind="release"]').count(), { timeout: 10_000 }).toBe(drawn);
    await expect(page.locator('[data-panel="writes-by-resource"] [data-marker="infra v0.83.42"] title').textContent()).resolves.toBe(
      "2026-09-11 14:45:00Z · infra v0.83.42\nreached stable sites",
    );
    await page.screenshot({ path: join(ARTIFACTS, "write-load.png"), fullPage: true });

    // Shift the range back by half: the URL changes to the new absolute window.
    await page.click('button[title="Shift back by half the range"]');
    await page.waitForURL((url) => url.searchParams.get("from") === String(FROM_MS - 2 * 3_600_000));
    const shifted = new URL(page.url());
    expect(shifted.searchParams.get("to")).toBe(String(TO_MS - 2 * 3_600_000));
    await waitForDrawn(page, ["writes-by-resource"]);
    const before = await totalsRows(page);

    // Reload the shifted URL: the same view comes back.
    await page.reload();
    await waitForDrawn(page, ["writes-by-resource", "writes-by-verb"]);
    expect(await totalsRows(page)).toEqual(before);
    expect(await page.inputValue('[data-testid="apiserver-select"]')).toBe(PROJECT_JOB);
    expect(errors).toEqual([]);
    await page.close();
  });

  it("downloads a panel as CSV equal to the data the API gave it", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    // The chart may ask twice (its width settles once the scrollbar appears); it shows the answer to the last request.
    const requests: Request[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/api/panels/writes-by-verb?")) requests.push(r);
    });
    await page.goto(`${app.url}/?from=${FROM_MS}&to=${TO_MS}&apiserver=${PROJECT_JOB}&resource=connectors.networking.datumapis.com`);
    await waitForDrawn(page, ["writes-by-verb"]);
    await page.waitForLoadState("networkidle");
    const api = (await (await requests.at(-1)!.response())!.json()) as {
      data: { series: { labels: Record<string, string>; points: [number, number | null][] }[] };
    };
    const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-panel="writes-by-verb"] [data-testid="panel-csv"]')]);
    const text = readFileSync(await download.path(), "utf8");
    const [header, ...rows] = text
      .trim()
      .split("\n")
      .map((line) => line.split(","));
    expect(header.slice(0, 3)).toEqual(["timestamp_ms", "time_utc", "value"]);
    const expected = api.data.series.flatMap((s) =>
      s.points.map(([t, v]) => [String(t), new Date(t).toISOString(), v === null ? "" : String(v), ...header.slice(3).map((l) => s.labels[l] ?? "")]),
    );
    expect(rows).toEqual(expected);
    expect(rows.length).toBeGreaterThan(100);

    // Hovering the chart shows each series' exact value at the point under the cursor, as the API gave it.
    const chart = page.locator('[data-panel="writes-by-verb"] [data-chart]');
    const box = (await chart.boundingBox())!;
    for (const fraction of [0.3, 0.75]) {
      await page.mouse.move(box.x + 52 + (box.width - 70) * fraction, box.y + box.height / 2);
      const tooltip = page.locator('[data-panel="writes-by-verb"] [role="tooltip"]');
      await tooltip.waitFor();
      const tsMs = Number(await tooltip.getAttribute("data-tooltip-time"));
      expect(tsMs).toBeGreaterThan(FROM_MS + (TO_MS - FROM_MS) * (fraction - 0.05));
      expect(tsMs).toBeLessThan(FROM_MS + (TO_MS - FROM_MS) * (fraction + 0.05));
      const shown = await tooltip
        .locator("[data-series-index]")
        .evaluateAll((items) =>
          items.map((item) => [Number(item.getAttribute("data-series-index")), item.querySelector("[data-value]")!.textContent!.trim()] as const),
        );
      expect(shown.length).toBe(api.data.series.length);
      for (const [index, text] of shown) expect(text).toBe(formatValue(api.data.series[index].points.find(([t]) => t === tsMs)?.[1] ?? null, "writes/s"));
      await page.locator('[data-panel="writes-by-verb"]').screenshot({ path: join(ARTIFACTS, `chart-tooltip-${fraction}.png`) });
    }
    await page.close();
  });

  it("starts the panel requests before the page's scripts have run, and uses each answer once", async () => {
    const link = `${app.url}/?from=${FROM_MS}&to=${TO_MS}&apiserver=${PROJECT_JOB}&resource=connectors.networking.datumapis.com`;
    const charts = ["writes-by-resource", "writes-by-verb", "effective-writes", "write-errors", "lease-renewals", "watch-fanout"];
    // A first visit: the HTML carries the preload script, with the chart widths left for it to fill in,
    // and no preloads of its own.
    const html = await (await fetch(link)).text();
    const script = /<script nonce="[^"]+">(\(function[\s\S]*?)<\/script>/.exec(html)?.[1];
    expect(script).toMatch(/"\/api\/panels\/writes-by-resource\?[^"]+&width=-1"/);
    expect(html).not.toContain('<link rel="preload" href="/api/panels/');

    /** Opens the link; returns the API URLs the page asked for and the preloads it holds, each sorted. */
    async function visit(context: BrowserContext) {
      const page = await context.newPage();
      const asked: string[] = [];
      page.on("request", (r) => {
        if (/\/api\/(panels|markers|apiservers)/.test(r.url())) asked.push(r.url().slice(app.url.length));
      });
      await page.goto(link);
      await waitForDrawn(page, charts);
      await page.waitForLoadState("networkidle");
      const preloads = await page.$$eval('link[rel="preload"][as="fetch"]', (links) =>
        links.map((l) => (l as HTMLLinkElement).href.slice(location.origin.length)),
      );
      // The first chart spans the page: about one point per pixel of its content box.
      const contentWidth = await page.$eval('main[data-view="write-load"]', (main) => {
        const style = getComputedStyle(main);
        return main.getBoundingClientRect().width - parseFloat(style.paddingLeft) - parseFloat(style.paddingRight);
      });
      await page.close();
      return { asked: asked.sort(), preloads: [...new Set(preloads)].sort(), fullWidth: Math.round(contentWidth / 100) * 100 };
    }

    const wide = await browser.newContext({ viewport: { width: 1400, height: 1000 } });
    const first = await visit(wide);
    // Eight panels, the markers and the API server list at this page's width, and the page asked for
    // exactly those, each once (had a URL differed by a byte, it would have asked again); then, once the
    // write rates had answered, the five signal panels below them, each once.
    expect(first.preloads.length).toBe(10);
    const later = first.asked.filter((url) => !first.preloads.includes(url));
    expect(later.map((url) => /^\/api\/panels\/([a-z-]+)\?/.exec(url)?.[1]).sort()).toEqual([
      "fanout-per-write",
      "noop-evidence",
      "object-sizes",
      "request-cost",
      "watch-bytes",
    ]);
    expect(first.asked).toEqual([...first.preloads, ...later].sort());
    expect(first.preloads.find((url) => url.startsWith("/api/panels/writes-by-resource?"))).toContain(`&width=${first.fullWidth}`);

    // Returning: the server preloads the same URLs from the width cookie, in the HTML's head, and the
    // script's preloads of the same URLs add no second request.
    const cookie = (await wide.cookies()).find((c) => c.name === "churnscope_width");
    expect(Number(cookie?.value)).toBeGreaterThan(1000);
    const head = await (await fetch(link, { headers: { cookie: `churnscope_width=${cookie!.value}` } })).text();
    const fromServer = [...head.matchAll(/<link rel="preload" href="([^"]+)" as="fetch" crossorigin=""/g)].map((m) => m[1].replaceAll("&amp;", "&")).sort();
    expect(fromServer).toEqual(first.preloads);
    const returning = await visit(wide);
    expect(returning.asked).toEqual(first.asked);

    // The window is narrower than last time: the cookie's preloads go unused, and the script's, at the
    // page's new width, are the ones the page takes, each once.
    await wide.close();
    const narrow = await browser.newContext({ viewport: { width: 900, height: 1000 } });
    await narrow.addCookies([{ name: "churnscope_width", value: cookie!.value, url: app.url }]);
    const resized = await visit(narrow);
    const current = resized.preloads.filter((url) => !first.preloads.includes(url));
    expect(current.length).toBeGreaterThan(0);
    expect(current.find((url) => url.startsWith("/api/panels/writes-by-resource?"))).toContain(`&width=${resized.fullWidth}`);
    for (const url of current) expect(resized.asked.filter((asked) => asked === url)).toEqual([url]);
    await narrow.close();
  });

  it("copies a link that freezes a relative range, and the link reproduces the view", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${app.url}/?from=now-6h&to=now&apiserver=${PROJECT_JOB}`);
    await page.waitForSelector('[data-panel="writes-by-resource"][data-state]:not([data-state="loading"])');
    const shown = await page.textContent('[data-testid="resolved-range"]');
    await page.click('[data-testid="copy-link"]');
    const link = new URL(await page.inputValue('[data-testid="copied-link"]'));
    expect(link.searchParams.get("from")).toMatch(/^\d{13}$/);
    expect(Number(link.searchParams.get("to")) - Number(link.searchParams.get("from"))).toBe(6 * 3_600_000);
    expect(link.searchParams.get("apiserver")).toBe(PROJECT_JOB);
    const later = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await later.goto(link.toString());
    await expect(later.textContent('[data-testid="resolved-range"]')).resolves.toBe(shown);
    expect(await later.inputValue('[data-testid="apiserver-select"]')).toBe(PROJECT_JOB);
    await later.close();
    await page.close();
  });

  it("drills into a resource from the legend and keeps it in the URL", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${app.url}/?from=${FROM_MS}&to=${TO_MS}&apiserver=${PROJECT_JOB}`);
    await waitForDrawn(page, ["writes-by-resource"]);
    await expect(page.textContent('[data-panel="writes-by-verb"]')).resolves.toMatch(/Pick a resource/);
    await page.click('[data-panel="writes-by-resource"] [data-drill="leases.coordination.k8s.io"]');
    await page.waitForURL((url) => url.searchParams.get("resource") === "leases.coordination.k8s.io");
    await waitForDrawn(page, ["writes-by-verb"]);
    const legend = await page.textContent('[data-panel="writes-by-verb"] [data-testid="legend"]');
    expect(legend).toContain("PATCH");
    expect(legend).toContain("PUT");
    await page.close();
  });

  it("zooms live on a drag: absolute from/to in the URL, every chart asks Prometheus for it, Zoom out and Back undo it", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${app.url}/?from=${FROM_MS}&to=${TO_MS}&apiserver=${PROJECT_JOB}&resource=leases.coordination.k8s.io`);
    await waitForDrawn(page, ["writes-by-resource", "writes-by-verb"]);
    const asked: URL[] = [];
    page.on("request", (r) => {
      if (r.url().includes("/api/panels/")) asked.push(new URL(r.url()));
    });
    const area = (await page.locator('[data-panel="writes-by-verb"] .u-over').boundingBox())!;
    const y = area.y + area.height / 2;
    await page.mouse.move(area.x + area.width * 0.25, y);
    await page.mouse.down();
    await page.mouse.move(area.x + area.width * 0.5, y, { steps: 8 });
    await page.mouse.up();
    await page.waitForURL((url) => url.searchParams.get("from") !== String(FROM_MS));
    const url = new URL(page.url());
    const fromMs = Number(url.searchParams.get("from"));
    const toMs = Number(url.searchParams.get("to"));
    const pixelMs = (TO_MS - FROM_MS) / area.width;
    expect(Math.abs(fromMs - (FROM_MS + 0.25 * (TO_MS - FROM_MS)))).toBeLessThanOrEqual(pixelMs + 1_000);
    expect(Math.abs(toMs - (FROM_MS + 0.5 * (TO_MS - FROM_MS)))).toBeLessThanOrEqual(pixelMs + 1_000);
    await waitForDrawn(page, ["writes-by-resource", "writes-by-verb", "effective-writes"]);
    const charts = asked.filter((u) => u.pathname !== "/api/panels/write-totals");
    expect(charts.length).toBeGreaterThanOrEqual(6);
    for (const u of charts) expect([Number(u.searchParams.get("from")), Number(u.searchParams.get("to"))], u.pathname).toEqual([fromMs, toMs]);
    await page.click('[data-testid="zoom-out"]');
    await page.waitForURL((u) => Number(u.searchParams.get("to")) - Number(u.searchParams.get("from")) === 2 * (toMs - fromMs));
    await page.goBack();
    await page.waitForURL((u) => Number(u.searchParams.get("from")) === fromMs);
    await page.goBack();
    await page.waitForURL((u) => Number(u.searchParams.get("from")) === FROM_MS);
    await page.close();
  });

  it("shows the notices a panel comes with", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${app.url}/?from=${FROM_MS}&to=${TO_MS}&apiserver=${LEGACY_JOB}&resource=connectors.networking.datumapis.com`);
    await waitForDrawn(page, ["watch-fanout"]);
    await expect(page.textContent('[data-panel="watch-fanout"] [data-testid="panel-notices"]')).resolves.toMatch(/Info:.*labels watch events by kind/);
    await page.close();
  });

  it("shows a clear message for a bad link instead of a blank page", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    await page.goto(`${app.url}/?from=yesterday&to=now`);
    await expect(page.textContent('[role="alert"]')).resolves.toMatch(/time range is not valid.*from: "yesterday"/);
    await page.close();
  });

  it("shows each panel's error, not a blank page, when Prometheus is down", async () => {
    const { freePort } = await import("../helpers/processes");
    const down = await startApp({ PROMETHEUS_URL: `http://127.0.0.1:${await freePort()}` });
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await page.goto(`${down.url}/?from=${FROM_MS}&to=${TO_MS}`);
      await page.waitForSelector('[data-panel="writes-by-resource"][data-state="error"]', { timeout: 30_000 });
      await expect(page.textContent('[data-panel="writes-by-resource"] [role="alert"]')).resolves.toMatch(
        /Query failed.*Prometheus is unreachable: ECONNREFUSED/,
      );
      await page.waitForSelector('[data-panel="write-totals"][data-state="error"]', { timeout: 30_000 });
      await expect(page.textContent("h1")).resolves.toBe("Write load");
      await page.screenshot({ path: join(ARTIFACTS, "write-load-prometheus-down.png") });
    } finally {
      await page.close();
      await down.stop();
    }
  });

  it("draws in dark mode too", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 }, colorScheme: "dark" });
    await page.goto(`${app.url}/?from=${FROM_MS}&to=${TO_MS}&apiserver=${PROJECT_JOB}&resource=connectors.networking.datumapis.com`);
    await waitForDrawn(page, ["writes-by-resource", "writes-by-verb"]);
    const background = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
    expect(background).toBe("rgb(15, 18, 22)");
    await page.screenshot({ path: join(ARTIFACTS, "write-load-dark.png"), fullPage: true });
    await page.close();
  });
});
