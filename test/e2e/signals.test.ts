/**
 * The signals on the replay in Chromium: the Write load page's section on what the writes changed and
 * cost draws each layer's count, names the layers the hub does not expose, and says dry runs are left
 * out; its numbers are the generator's (the API checks are in the integration tests, this checks the page).
 */
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { PROJECT_JOB, HUB_JOB } from "@/lib/demo/types";
import { WATCHERS } from "@/lib/demo/metrics";
import { ARTIFACTS, waitForDrawn } from "../helpers/browser";
import { useReplayApp } from "../helpers/replay-app";

const h = useReplayApp();
const SIGNALS = ["noop-evidence", "fanout-per-write", "request-cost", "watch-bytes", "object-sizes"];
const ready = (id: string) => `[data-panel="${id}"][data-state="ready"]:not([data-updating])`;

describe("signals on the replay in Chromium", () => {
  it("draws each layer's count for the project API server, with the watchers per write the generator gave each resource", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await page.goto(`${h.app.url}/?snapshot=replay&apiserver=${encodeURIComponent(PROJECT_JOB)}`);
      await waitForDrawn(page, SIGNALS, { state: "attached", timeoutMs: 60_000 });
      await expect(page.textContent("#write-signals")).resolves.toBe("What the writes changed and cost");
      await expect(page.textContent("main")).resolves.toContain("Dry runs left out");
      expect(await page.locator('[data-testid="dry-run-toggle"]').count()).toBe(0);
      // The legend names every layer the project API server and the edges count.
      const legend = await page
        .locator(`${ready("noop-evidence")} [data-legend-entry]`)
        .evaluateAll((els) => els.map((e) => e.getAttribute("data-legend-entry")));
      for (const name of [
        "API writes (2xx)",
        "stored changes (storage events, one replica)",
        "Envoy Gateway: status updates with no action",
        "Karmada: propagations that changed nothing",
      ]) {
        expect(
          legend.some((l) => l?.startsWith(name)),
          `${name} in ${JSON.stringify(legend)}`,
        ).toBe(true);
      }
      // The request cost legend's average for Connectors' writers is the generator's watcher count.
      const costLegend = await page.locator(`${ready("request-cost")} [data-legend-entry]`).evaluateAll((els) => els.map((e) => e.textContent ?? ""));
      const connectorsWatchers = costLegend.find((t) => t.includes("watchers notified · service-accounts"));
      expect(connectorsWatchers, JSON.stringify(costLegend)).toContain(`avg ${WATCHERS[`${PROJECT_JOB}/connectors`]} per request`);
      await page.locator("#write-signals").scrollIntoViewIfNeeded();
      await page.screenshot({ path: join(ARTIFACTS, "signals.png"), fullPage: true });
    } finally {
      await page.close();
    }
  });

  it("names, under each panel, the families the hub API server does not expose", async () => {
    const page = await h.browser.newPage({ viewport: { width: 1400, height: 1000 } });
    try {
      await page.goto(`${h.app.url}/?snapshot=replay&apiserver=${encodeURIComponent(HUB_JOB)}`);
      await waitForDrawn(page, "noop-evidence", { state: "attached", timeoutMs: 60_000 });
      await expect(page.textContent(`${ready("noop-evidence")} [data-testid="panel-notices"]`)).resolves.toContain(
        "apiserver_storage_events_received_total (Kubernetes 1.30+) is not scraped here",
      );
      // Nothing to draw: one line after the charts, with the families it looked for, instead of an empty chart.
      const line = '[data-testid="panel-not-shown"][data-panel="object-sizes"]';
      await page.waitForSelector(line, { state: "attached", timeout: 60_000 });
      await expect(page.textContent(line)).resolves.toContain("apiserver_resource_size_estimate_bytes (Kubernetes 1.34+) is not scraped here.");
      await expect(page.locator('[data-panel="object-sizes"] [data-chart]').count()).resolves.toBe(0);
      await page.screenshot({ path: join(ARTIFACTS, "signals-hub.png"), fullPage: true });
    } finally {
      await page.close();
    }
  });
});
