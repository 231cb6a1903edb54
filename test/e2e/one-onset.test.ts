/**
 * One onset: on the replay every page that draws a chart marks the same minute as "onset (detected)", the minute the
 * generator started the churn, on every range and on a zoom onto it; Clients and Edge rebuilds offer that minute as
 * their before/after time (Clients beside the recorded changes' times).
 */
import type { Page } from "playwright-core";
import { describe, expect, it } from "vitest";
import { NAMED } from "@/lib/demo/params";
import { formatUtc } from "@/lib/format/time";
import { useReplayApp } from "../helpers/replay-app";

const h = useReplayApp();
const ONSET_MARKER = 'g[data-marker="onset (detected)"] title';

/** The times every drawn onset marker names (its tooltip starts with its time). */
async function onsetTimes(page: Page): Promise<string[]> {
  await page.waitForSelector(ONSET_MARKER, { state: "attached", timeout: 60_000 });
  return page.$$eval(ONSET_MARKER, (titles) => [...new Set(titles.map((t) => (t.textContent ?? "").split(" · ")[0]))]);
}

describe("one onset on the replay", () => {
  it("is the same minute on every page, range and zoom, and is offered as the before/after time", async () => {
    const { startMs, endMs, onsetMs } = h.replay.params;
    const minute = formatUtc(onsetMs);
    const day = `from=${Date.UTC(2026, 8, 11)}&to=${Date.UTC(2026, 8, 12)}`;
    const zoom = `from=${onsetMs - 10 * 60_000}&to=${onsetMs + 10 * 60_000}`;
    const timeline = `/objects/milo/networking.datumapis.com/Connector/${NAMED.project}/${NAMED.flipsThenFlaps}?snapshot=replay&from=${startMs}&to=${endMs}`;
    const page = await h.browser.newPage({ viewport: { width: 1440, height: 900 } });
    try {
      for (const path of [
        "/?snapshot=replay",
        `/?snapshot=replay&${day}`,
        `/?snapshot=replay&${zoom}`,
        `/rebuilds?snapshot=replay&${day}`,
        `/compare?snapshot=replay&${day}`,
        `/clients?snapshot=replay&${day}`,
        `/objects/lanes?snapshot=replay&${day}`,
        timeline,
      ]) {
        await page.goto(`${h.app.url}${path}`);
        expect(await onsetTimes(page), path).toEqual([minute]);
      }
      // Edge rebuilds without a before/after time offers the onset; Clients likewise.
      await page.goto(`${h.app.url}/rebuilds?snapshot=replay&${day}`);
      const offer = page.locator('[data-testid="compare-at-onset"]');
      await offer.waitFor({ timeout: 60_000 });
      expect(await offer.textContent()).toContain(formatUtc(onsetMs, false));
      await offer.click();
      await page.waitForURL((url) => url.searchParams.get("at") === String(onsetMs));
      await page.goto(`${h.app.url}/clients?snapshot=replay&${day}`);
      const compare = page.getByRole("button", { name: `Compare before/after ${formatUtc(onsetMs, false)}` });
      await compare.waitFor({ timeout: 60_000 });
      // Its API calls offer the recorded changes' times too, written as every page writes a time.
      const release = h.replay.params.markers.find((m) => m.label === "DatumConnect v0.1.4")!;
      const offers = page.locator('[data-testid="compare-at-change"]');
      await offers.waitFor({ timeout: 60_000 });
      expect(await offers.textContent()).toContain(`DatumConnect v0.1.4 (${formatUtc(release.timeMs, false)})`);
    } finally {
      await page.close();
    }
  });
});
