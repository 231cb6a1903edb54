/**
 * The dashboard rolls up a live store filled before it started (by a recorder, or an audit log) in
 * a thread of its own, and ranks exactly what the store holds meanwhile and after.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { startApp, type TestApp } from "../helpers/app";
import { fillLiveStore, LIVE_DAY0, liveDaysRolledUp } from "../helpers/live-store";

const DAYS = 4;
let app: TestApp | undefined;
afterAll(async () => {
  await app?.stop();
});

describe("the dashboard's roll-up thread", () => {
  it("rolls up the days of a store filled before it started, and the ranking is exact before and after", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "churnscope-live-"));
    const truth = await fillLiveStore(dataDir, DAYS);
    expect(liveDaysRolledUp(dataDir)).toBe(0);
    app = await startApp({ CHURNSCOPE_DATA_DIR: dataDir });
    const ranking = async () => {
      const answer = await (await fetch(`${app!.url}/api/objects?from=${LIVE_DAY0}&to=${LIVE_DAY0 + DAYS * 86_400_000}&pageSize=50`)).json();
      expect(answer.status, JSON.stringify(answer)).toBe("success");
      return Object.fromEntries(
        (answer.data.rows as { name: string; writes: number; routed: number }[]).map((r) => [r.name, { writes: r.writes, routed: r.routed }]),
      );
    };
    // The first request opens the live store, which starts the thread; its answer is exact whatever is rolled up yet.
    expect(await ranking()).toEqual(Object.fromEntries(truth));
    const deadline = Date.now() + 30_000;
    while (liveDaysRolledUp(dataDir) < DAYS && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 100));
    expect(liveDaysRolledUp(dataDir)).toBe(DAYS);
    expect(await ranking()).toEqual(Object.fromEntries(truth));
    expect(app.running.output()).not.toMatch(/objects rollups/);
  }, 60_000);
});
