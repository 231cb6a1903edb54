/** A fresh `npm start` with nothing configured (so it serves the replay), Chromium, and the generator's own replay for ground truth. */
import type { Browser } from "playwright-core";
import { afterAll, beforeAll } from "vitest";
import { generateReplay, type Replay } from "@/lib/demo/replay";
import { startApp, type TestApp } from "./app";
import { launchBrowser } from "./browser";

export interface ReplayHarness {
  app: TestApp;
  browser: Browser;
  replay: Replay;
}

export function useReplayApp(): ReplayHarness {
  const harness = {} as ReplayHarness;
  beforeAll(async () => {
    harness.replay = generateReplay();
    harness.app = await startApp({});
    harness.browser = await launchBrowser();
  }, 120_000);
  afterAll(async () => {
    await harness.browser?.close();
    await harness.app?.stop();
  });
  return harness;
}
