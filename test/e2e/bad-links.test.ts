/**
 * Links that ask for what a page cannot show, on the replay in Chromium: each page names the value it cannot use and
 * what it shows instead, and shows that (never empty panels or a silent other answer); a link to a snapshot this
 * dashboard does not hold offers the ones it holds.
 */
import { describe, expect, it } from "vitest";
import { formatUtc } from "@/lib/format/time";
import { waitForDrawn } from "../helpers/browser";
import { useReplayApp } from "../helpers/replay-app";

const h = useReplayApp();
const notice = '[data-testid="link-notice"]';

describe("a link a page cannot follow as asked", () => {
  it("Edge rebuilds with a site the range does not have: says so, and shows every site", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      const { startMs, endMs, sites } = h.replay.params;
      await page.goto(`${h.app.url}/rebuilds?snapshot=replay&from=${startMs}&to=${endMs}&site=edge-xyz&at=yesterday`);
      await waitForDrawn(page, "rebuild-rate");
      const text = await page.locator(notice).textContent();
      expect(text).toContain(
        `site "edge-xyz" is not a site in this range (${[...sites].sort().slice(0, 5).join(", ")}, and ${sites.length - 5} more): showing all sites`,
      );
      expect(text).toContain('before/after time "yesterday" is not a time in epoch milliseconds: no before/after comparison');
      expect(await page.locator('[data-testid="site-multiples"] [data-site]').count()).toBe(sites.length);
      expect(await page.locator("text=No data in this range").count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it("Write load with an API server and a resource the range does not have: says so, and shows every one", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      const { startMs, endMs } = h.replay.params;
      await page.goto(`${h.app.url}/?snapshot=replay&from=${startMs}&to=${endMs}&apiserver=nope&resource=foos.example.com`);
      await waitForDrawn(page, "writes-by-resource");
      const text = await page.locator(notice).textContent();
      expect(text).toMatch(/API server "nope" is not an API server in this range \(milo-apiserver, .*\): showing every API server/);
      expect(text).toMatch(
        /resource "foos\.example\.com" is not a resource in this range \(.*connectors\.networking\.datumapis\.com.*\): showing every resource/,
      );
      expect(await page.inputValue('[data-testid="resource-select"]')).toBe("");
      expect(await page.locator("text=No data in this range").count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it("Objects, Field churn and Lanes with a cluster, kind or sort the store does not have: say so, and show what the link without it shows", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      const { startMs, endMs } = h.replay.params;
      const range = `snapshot=replay&from=${startMs}&to=${endMs}`;
      const clusters = [...new Set(h.replay.sink.objects.map((o) => o.cluster))].sort();
      const kinds = [...new Set(h.replay.sink.objects.map((o) => o.kind))].sort();
      const listed = (names: string[]) => `${names.slice(0, 5).join(", ")}${names.length > 5 ? `, and ${names.length - 5} more` : ""}`;
      const rowsOf = async (path: string) => {
        await page.goto(`${h.app.url}${path}`);
        await page.waitForSelector('[data-testid="objects-table"][data-state="ready"]:not([data-updating]) tr[data-object]', { timeout: 60_000 });
        return page.$$eval("tr[data-object]", (rows) => rows.map((r) => r.getAttribute("data-object")));
      };
      const every = await rowsOf(`/objects?${range}`);
      expect(await rowsOf(`/objects?${range}&cluster=nope&kind=Widget&sort=bogus`)).toEqual(every);
      const text = await page.locator(notice).textContent();
      expect(text).toContain(`cluster "nope" is not a cluster in this range (${listed(clusters)}): showing every cluster`);
      expect(text).toContain(`kind "Widget" is not a kind in this range (${listed(kinds)}): showing every kind`);
      expect(text).toContain('sort "bogus" is not one of writes, routed, unrouted, noop, create, delete, wasted, name: sorting by writes');
      expect(await page.inputValue('[data-testid="cluster-select"]')).toBe("");

      await page.goto(`${h.app.url}/fields?${range}&kind=Widget`);
      await page.waitForSelector('[data-testid="fields-table"][data-state="ready"]:not([data-updating]) tr', { timeout: 60_000 });
      expect(await page.locator(notice).textContent()).toContain('kind "Widget" is not a kind in this range');
      expect(await page.locator('[data-testid="fields-scope"]').textContent()).toContain("every kind");

      await page.goto(`${h.app.url}/objects/lanes?${range}`);
      const all = await (await page.waitForSelector('[data-testid="lanes"][data-state="ready"][data-total]', { timeout: 60_000 })).getAttribute("data-total");
      await page.goto(`${h.app.url}/objects/lanes?${range}&cluster=nope`);
      // The first answer, for the cluster as asked, has none; the page then asks without it.
      await page.waitForSelector(`[data-testid="lanes"][data-total="${all}"]`, { timeout: 60_000 }).catch(() => undefined);
      expect(await page.getAttribute('[data-testid="lanes"]', "data-total")).toBe(all);
      expect(await page.locator(notice).textContent()).toContain('cluster "nope" is not a cluster in this range');
    } finally {
      await page.close();
    }
  });

  it("a range that is not one, on a snapshot: names the range it shows instead, the snapshot's", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await page.goto(`${h.app.url}/?snapshot=replay&from=garbage&to=now`);
      const text = (await page.locator(notice).textContent())!;
      const shown = (await page.locator('[data-testid="resolved-range"]').textContent())!.replace(" (UTC)", "");
      expect(text).toMatch(/time range is not valid \(from: "garbage"/);
      expect(text).toContain(`showing the snapshot's range, ${shown} UTC, instead`);
      expect(text).not.toContain("last 6 hours");
    } finally {
      await page.close();
    }
  });

  it("Clients with a before/after time that is not one, or outside the range: says which, and compares nothing", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      const { startMs, endMs } = h.replay.params;
      await page.goto(`${h.app.url}/clients?snapshot=replay&from=${startMs}&to=${endMs}&at=tomorrow`);
      await expect.poll(() => page.locator(notice).textContent()).toContain('before/after time "tomorrow" is not a time in epoch milliseconds');
      await page.waitForSelector('[data-testid="clients-table"] tr[data-client]', { timeout: 60_000 });
      expect(await page.locator('[data-testid="clients-table"] [data-cell="before"]').count()).toBe(0);
      const outside = endMs + 3_600_000;
      await page.goto(`${h.app.url}/clients?snapshot=replay&from=${startMs}&to=${endMs}&at=${outside}`);
      await expect.poll(() => page.locator(notice).textContent()).toContain(`before/after time ${formatUtc(outside, false)} is outside the range`);
      await page.waitForSelector('[data-testid="clients-table"] tr[data-client]', { timeout: 60_000 });
      expect(await page.locator('[role="alert"]:has-text("Query failed")').count()).toBe(0);
    } finally {
      await page.close();
    }
  });

  it("Compare with a window it cannot count in: says so and counts per 3 h", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await page.goto(`${h.app.url}/compare?snapshot=replay&window=99999d`);
      await expect
        .poll(() => page.locator(notice).textContent())
        .toContain('window "99999d" is not a window between 1m and 7d in whole seconds, such as 1h, 3h or 6h: counting per 3h instead');
      await page.waitForSelector('[data-panel="compare"][data-state="ready"] [data-testid="compare-table"] tr[data-window-end]', { timeout: 60_000 });
    } finally {
      await page.close();
    }
  });

  it("a snapshot this dashboard does not hold: says so and offers the replay, which opens", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 900 } });
    try {
      await page.goto(`${h.app.url}/rebuilds?snapshot=0123456789abcdef`);
      await expect(page.locator('[data-testid="snapshot-open-error"]').textContent()).resolves.toContain("no snapshot with id 0123456789abcdef");
      await page.click('[data-testid="snapshot-offers"] a:has-text("replay")');
      await page.waitForURL((url) => url.pathname === "/rebuilds" && url.searchParams.get("snapshot") === "replay");
      await waitForDrawn(page, "rebuild-rate");
    } finally {
      await page.close();
    }
  });

  it("the Grafana export where there is no Prometheus (the replay, a snapshot): a 409 that says why, not a 503", async () => {
    for (const search of ["view=write-load", "view=rebuilds&snapshot=replay"]) {
      const res = await fetch(`${h.app.url}/api/grafana?${search}`);
      const body = (await res.json()) as { error: string };
      expect(res.status, body.error).toBe(409);
      expect(body.error).toMatch(search.includes("snapshot") ? /a snapshot has no Prometheus behind it/ : /No Prometheus is configured/);
    }
  });
});
