/**
 * The incident workflow in Chromium against `npm start` and a real Prometheus: markers found by
 * PromQL (a new build-info version), notes added in the UI with their author from the trusted
 * header, PNG export of a panel, and the compare view's table against the generator's counts,
 * reproduced from a copied link.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { formatCount } from "@/lib/format/number";
import type { CounterSeries } from "@/lib/scenario/counters";
import { startApp, writeConfig, type TestApp, uploadSnapshot } from "../helpers/app";
import { ARTIFACTS, launchBrowser, waitForDrawn } from "../helpers/browser";
import { startPrometheus, type TestPrometheus } from "../helpers/prometheus";
import { buildWriteLoadScenario, GRID, HUB_JOB, PROJECT_JOB, truthTotal } from "../helpers/write-load-scenario";

const at = (iso: string) => Date.parse(iso);
const FROM_MS = at("2026-09-11T12:00:00Z");
const TO_MS = at("2026-09-11T16:00:00Z");
const RELEASE_S = at("2026-09-11T14:30:00Z") / 1000;
/** The charts this scenario draws: the signal panels with data here are the no-op evidence and the watch events per write. */
const CHARTS = ["writes-by-resource", "effective-writes", "write-errors", "lease-renewals", "watch-fanout", "noop-evidence", "fanout-per-write"];

let series: CounterSeries[];
let prom: TestPrometheus;
let app: TestApp;
let browser: Browser;

/** A build-info gauge per version: v0.26.4 until the release, v0.26.5 from it. */
function buildInfo(version: string, fromSeconds: number, toSeconds: number): CounterSeries {
  const count = Math.floor((toSeconds - fromSeconds) / GRID.intervalSeconds) + 1;
  return {
    name: "nso_build_info",
    kind: "gauge",
    labels: { job: "network-services-operator", version },
    startSeconds: fromSeconds,
    intervalSeconds: GRID.intervalSeconds,
    values: new Float64Array(count).fill(1),
  };
}

beforeAll(async () => {
  series = buildWriteLoadScenario();
  prom = await startPrometheus([
    ...series,
    buildInfo("v0.26.4", GRID.startSeconds, RELEASE_S - GRID.intervalSeconds),
    buildInfo("v0.26.5", RELEASE_S, GRID.endSeconds),
  ]);
  app = await startApp({
    CHURNSCOPE_CONFIG: writeConfig(
      `prometheus:\n  url: ${prom.url}\n  scrapeIntervalSeconds: 15\napiservers:\n  project: [${PROJECT_JOB}]\n  hub: [${JSON.stringify(HUB_JOB)}]\n` +
        "auth:\n  userHeader: X-Forwarded-User\n" +
        "markers:\n  - { time: '2026-09-11T14:45:00Z', label: infra v0.83.42, detail: reached stable sites }\n" +
        'markerQueries:\n  - { name: NSO, expr: \'max by (version) (nso_build_info)\', label: version, detail: operator release }\n  - { name: broken, expr: \'label_replace(up, "a", "$1", "b", "(")\' }\n',
    ),
  });
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await app?.stop();
  await prom?.stop();
});

async function markers(from = FROM_MS, to = TO_MS) {
  const body = await (await fetch(`${app.url}/api/markers?from=${from}&to=${to}`)).json();
  expect(body.status).toBe("success");
  return body as { data: { timeMs: number; label: string; detail: string; kind: string; id?: number }[]; warnings: string[] };
}

describe("markers and notes", () => {
  it("find the release in build info within one step, keep the configured ones, and report a broken query", async () => {
    const { data, warnings } = await markers();
    const nso = data.filter((m) => m.kind === "query");
    expect(nso.map((m) => m.label)).toEqual(["NSO v0.26.5"]);
    // A 4 h range at 1000 points steps by 15 s: the marker is the first step with the new version.
    expect(nso[0].timeMs - RELEASE_S * 1000).toBeGreaterThanOrEqual(0);
    expect(nso[0].timeMs - RELEASE_S * 1000).toBeLessThanOrEqual(15_000);
    expect(data.find((m) => m.kind === "release")?.label).toBe("infra v0.83.42");
    expect(warnings).toHaveLength(1);
    // Well-formed PromQL (a malformed one is refused at start) that Prometheus refuses when it runs it: a bad regex.
    expect(warnings[0]).toMatch(/^marker query broken failed: .*invalid regular expression/);
    // A range after the release holds no NSO marker: v0.26.5 was already there when it starts.
    expect((await markers(at("2026-09-11T15:00:00Z"), at("2026-09-11T17:00:00Z"))).data.filter((m) => m.kind === "query")).toEqual([]);
  });

  it("take notes with the author from the trusted header, refuse bad ones, and delete them", async () => {
    const post = (body: string, headers: Record<string, string> = {}) =>
      fetch(`${app.url}/api/notes`, { method: "POST", headers: { "content-type": "application/json", ...headers }, body });
    const added = await post(JSON.stringify({ timeMs: at("2026-09-11T13:20:00Z"), text: "status writes up ×15" }), { "X-Forwarded-User": "alice@example.com" });
    expect(added.status).toBe(200);
    const note = (await added.json()).data;
    expect(note.author).toBe("alice@example.com");
    expect((await markers()).data.find((m) => m.kind === "note")).toMatchObject({
      label: "status writes up ×15",
      detail: expect.stringContaining("— alice@example.com, added "),
    });
    for (const [body, message] of [
      ["{", /not JSON/],
      [JSON.stringify({ timeMs: "soon", text: "x" }), /note timeMs/],
      [JSON.stringify({ timeMs: at("2026-09-11T13:20:00Z"), text: "" }), /a note needs text/],
      ["x".repeat(20_000), /larger than 16 KiB/],
    ] as const) {
      const res = await post(body);
      expect(res.status, body.slice(0, 20)).toBeGreaterThanOrEqual(400);
      expect(res.status).toBeLessThan(500);
      expect((await res.json()).error).toMatch(message);
    }
    expect((await fetch(`${app.url}/api/notes/${note.id}`, { method: "DELETE" })).status).toBe(200);
    expect((await fetch(`${app.url}/api/notes/${note.id}`, { method: "DELETE" })).status).toBe(404);
    expect((await fetch(`${app.url}/api/notes/abc`, { method: "DELETE" })).status).toBe(400);
    expect((await markers()).data.filter((m) => m.kind === "note")).toEqual([]);
  });

  it("a note added in the UI is a marker with its author on every chart, beside the release found by PromQL", async () => {
    const context = await browser.newContext({ viewport: { width: 1400, height: 1000 }, extraHTTPHeaders: { "X-Forwarded-User": "carol" } });
    const page = await context.newPage();
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    await page.goto(`${app.url}/?from=${FROM_MS}&to=${TO_MS}&apiserver=${PROJECT_JOB}`);
    await waitForDrawn(page, CHARTS);
    expect(await page.locator('[data-marker="NSO v0.26.5"][data-marker-kind="query"]').count()).toBe(CHARTS.length);
    await page.click('[data-testid="notes-button"]');
    // The broken marker query is reported where notes are, not hidden.
    await expect(page.textContent('[data-testid="notes-popover"]')).resolves.toMatch(/marker query broken failed/);
    await page.fill('[data-testid="note-time"]', "2026-09-11T15:05:00Z");
    await page.fill('[data-testid="note-text"]', "paged the network team");
    await page.click('[data-testid="note-save"]');
    // Its line (a group of no width, so "attached"), and its label drawn on every chart.
    await page.waitForSelector('[data-marker="paged the network team"][data-marker-kind="note"]', { state: "attached" });
    expect(await page.locator('[data-marker="paged the network team"]').count()).toBe(CHARTS.length);
    for (const id of CHARTS) await page.locator(`[data-panel="${id}"] [data-marker-label="paged the network team"]`).waitFor();
    await expect(page.locator('[data-panel="lease-renewals"] [data-marker="paged the network team"] title').textContent()).resolves.toMatch(
      /^2026-09-11 15:05:00Z · paged the network team\npaged the network team\n— carol, added /,
    );
    await expect(page.textContent('[data-testid="notes-list"]')).resolves.toMatch(/paged the network team/);
    await page.screenshot({ path: join(ARTIFACTS, "notes.png") });

    // Another browser sees the note too: it is stored on the server, not in the page.
    const other = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await other.goto(`${app.url}/?from=${FROM_MS}&to=${TO_MS}`);
    await waitForDrawn(other, ["writes-by-resource"]);
    await other.waitForSelector('[data-panel="writes-by-resource"] [data-marker-label="paged the network team"]');
    await other.close();
    expect(errors).toEqual([]);
    await context.close();
  });
});

describe("exports", () => {
  it("a downloaded snapshot carries every marker shown: configured, found by PromQL, and notes", async () => {
    const download = await fetch(`${app.url}/api/snapshots/export?from=${FROM_MS}&to=${TO_MS}`);
    expect(download.status).toBe(200);
    const upload = await (await uploadSnapshot(app.url, Buffer.from(await download.arrayBuffer()))).json();
    const live = (await markers()).data.map(({ id: _id, ...m }) => m);
    const frozen = await (await fetch(`${app.url}/api/markers?from=${FROM_MS}&to=${TO_MS}&snapshot=${upload.data.id}`)).json();
    expect(frozen.data).toEqual(live);
    expect(live.map((m) => m.kind).sort()).toEqual(["note", "query", "release"]);
  });

  it("PNG: a panel downloads as an image of its chart with title and legend, at twice the screen's pixels", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1000 } });
    await page.goto(`${app.url}/?from=${FROM_MS}&to=${TO_MS}&apiserver=${PROJECT_JOB}`);
    await waitForDrawn(page, ["writes-by-resource"]);
    const chartWidth = await page.locator('[data-panel="writes-by-resource"] [data-chart]').evaluate((chart) => chart.getBoundingClientRect().width);
    const [download] = await Promise.all([page.waitForEvent("download"), page.click('[data-panel="writes-by-resource"] [data-testid="panel-png"]')]);
    expect(download.suggestedFilename()).toBe("writes-by-resource.png");
    const png = readFileSync((await download.path())!);
    expect(png.subarray(0, 8).toString("hex")).toBe("89504e470d0a1a0a");
    expect(png.readUInt32BE(16)).toBe(Math.round((chartWidth + 24) * 2));
    // Decoded by the browser: the first series' area (its legend colour at 55 % over the white panel) fills a visible part of the picture.
    const swatch = await page
      .locator('[data-panel="writes-by-resource"] [data-legend-swatch]')
      .first()
      .evaluate((e) => getComputedStyle(e).backgroundColor);
    const fill = swatch
      .match(/\d+/g)!
      .slice(0, 3)
      .map((c) => Math.round(Number(c) * 0.55 + 255 * 0.45));
    const share = await page.evaluate(
      async ({ b64, rgb }) => {
        const image = new Image();
        image.src = `data:image/png;base64,${b64}`;
        await image.decode();
        const canvas = document.createElement("canvas");
        canvas.width = image.width;
        canvas.height = image.height;
        const ctx = canvas.getContext("2d")!;
        ctx.drawImage(image, 0, 0);
        const { data } = ctx.getImageData(0, 0, image.width, image.height);
        let painted = 0;
        for (let i = 0; i < data.length; i += 4)
          if (Math.abs(data[i] - rgb[0]) + Math.abs(data[i + 1] - rgb[1]) + Math.abs(data[i + 2] - rgb[2]) < 24) painted++;
        return painted / (data.length / 4);
      },
      { b64: png.toString("base64"), rgb: fill },
    );
    writeFileSync(join(ARTIFACTS, "panel-export.png"), png);
    expect(share).toBeGreaterThan(0.005);
    await page.close();
  });
});

describe("compare view", () => {
  const statusPuts = `apiserver_request_total{job="${PROJECT_JOB}", resource="connectors", subresource="status", verb="PUT"}`;
  const hubPuts = `apiserver_request_total{job="${HUB_JOB}", resource="connectors", verb="PUT"}`;

  it("shows both counts and A ÷ B per aligned window equal to the generator's, and a copied link reproduces it", async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
    const errors: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    const from = at("2026-09-11T06:20:00Z");
    await page.goto(`${app.url}/compare?from=${from}&to=${at("2026-09-11T18:00:00Z")}`);
    await page.fill('[data-testid="selector-a"]', statusPuts.replace(/, /g, ","));
    await page.press('[data-testid="selector-a"]', "Enter");
    await page.fill('[data-testid="selector-b"]', `${hubPuts} or vector(1)`);
    await expect(page.textContent('[data-testid="selector-b-status"]')).resolves.toMatch(/column \d+: expected the end of the selector/);
    await page.fill('[data-testid="selector-b"]', hubPuts);
    await page.press('[data-testid="selector-b"]', "Enter");
    await page.click('button:text-is("3h")');
    await page.waitForURL((url) => url.searchParams.get("window") === "3h" && url.searchParams.get("b") === hubPuts);

    const expected = (startMs: number) => {
      const truth = (job: string, sub?: string) =>
        truthTotal(
          series,
          (l, name) => name === "apiserver_request_total" && l.job === job && l.resource === "connectors" && l.verb === "PUT" && l.subresource === sub,
          startMs / 1000,
          startMs / 1000 + 10_800,
        );
      return [truth(PROJECT_JOB, "status"), truth(HUB_JOB)];
    };
    const table = async (p: Page) => {
      await p.waitForSelector('[data-panel="compare"][data-state="ready"]:not([data-updating]) [data-testid="compare-table"] tr[data-window-end]');
      return p.$$eval('[data-testid="compare-table"] tr[data-window-end]', (trs) =>
        trs.map(
          (tr) =>
            [Number(tr.getAttribute("data-window-end")), ...["a", "b", "ratio"].map((c) => tr.querySelector(`[data-cell="${c}"]`)!.textContent)] as [
              number,
              string,
              string,
              string,
            ],
        ),
      );
    };
    const rows = await table(page);
    // 06:20–18:00 holds the whole 3 h windows 09–12, 12–15 and 15–18 UTC (06–09 starts before the range).
    expect(rows.map((r) => new Date(r[0]).toISOString())).toEqual(["2026-09-11T12:00:00.000Z", "2026-09-11T15:00:00.000Z", "2026-09-11T18:00:00.000Z"]);
    for (const [endMs, a, b, ratio] of rows) {
      const [ta, tb] = expected(endMs - 10_800_000);
      expect([a, b, ratio]).toEqual([formatCount(ta), formatCount(tb), (ta / tb).toFixed(3)]);
    }
    // The markers come in their own answer.
    await expect.poll(() => page.locator('[data-panel="compare"] [data-marker="NSO v0.26.5"]').count(), { timeout: 10_000 }).toBe(1);
    await page.screenshot({ path: join(ARTIFACTS, "compare.png"), fullPage: true });

    await page.click('[data-testid="copy-link"]');
    const link = await page.inputValue('[data-testid="copied-link"]');
    const again = await browser.newPage({ viewport: { width: 1400, height: 1100 } });
    await again.goto(link);
    expect(await table(again)).toEqual(rows);
    expect(await again.inputValue('[data-testid="selector-a"]')).toBe(statusPuts);
    await again.close();
    expect(errors).toEqual([]);
    await page.close();
  });
});
