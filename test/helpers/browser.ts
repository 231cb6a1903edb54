/** Debian's Chromium driven by playwright-core (no browser download), with the flags this sandbox needs. */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions, type Page } from "playwright-core";
import { requireBinary } from "./processes";
import { ROOT } from "./root";

export const ARTIFACTS = join(ROOT, "test-results");

/**
 * A bound for the replay's bundle to be downloaded, or uploaded and opened: each is packed with gzip, which took 7 and
 * 11 s on a loaded 2-core machine at gzip's best level, and 30 s was not enough with the machine busier still.
 */
export const BUNDLE_TRANSFER_MS = 90_000;

/**
 * A panel that has its answer, is not updating, and whose chart has drawn it; with `orNotShown`, also a panel said in
 * one line to be one this datasource cannot answer.
 */
export function drawnSelector(panel: string, orNotShown = false): string {
  const drawn = `[data-panel="${panel}"][data-state="ready"]:not([data-updating]) [data-chart][data-drawn]`;
  return orNotShown ? `${drawn}, [data-testid="panel-not-shown"][data-panel="${panel}"]` : drawn;
}

interface DrawnOptions {
  timeoutMs?: number;
  /** "attached" where a chart may draw only flat all-zero lines, whose element then has an empty bounding box */
  state?: "attached" | "visible";
  orNotShown?: boolean;
}

/** Waits until each panel has its answer, is not updating, and its chart has drawn it (drawnSelector), one after another. */
export async function waitForDrawn(page: Page, panels: string | readonly string[], options: DrawnOptions = {}): Promise<void> {
  for (const panel of typeof panels === "string" ? [panels] : panels) {
    await page.waitForSelector(drawnSelector(panel, options.orNotShown), { state: options.state ?? "visible", timeout: options.timeoutMs ?? 30_000 });
  }
}

const LAUNCH_ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

function chromiumPath(): string {
  const executablePath = requireBinary("chromium", "install Debian's package: apt-get install -y chromium");
  mkdirSync(ARTIFACTS, { recursive: true });
  return executablePath;
}

/**
 * E2E_API_DELAY_MS (on demand, never in CI): each API answer reaches the page after a random delay up to this many ms,
 * so the page's answers arrive in every order; a test that reads the page before the answer it checks has come fails.
 */
const API_DELAY_MS = Number(process.env.E2E_API_DELAY_MS ?? 0);

export async function launchBrowser(): Promise<Browser> {
  const browser = await chromium.launch({ executablePath: chromiumPath(), headless: true, args: LAUNCH_ARGS });
  if (API_DELAY_MS > 0) {
    const newPage = browser.newPage.bind(browser);
    browser.newPage = async (options) => {
      const page = await newPage(options);
      await page.route("**/api/**", async (route) => {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * API_DELAY_MS));
        await route.continue().catch(() => undefined); // the page went meanwhile
      });
      return page;
    };
  }
  return browser;
}

/**
 * A browser with a profile on disk, as someone's own browser is: its HTTP cache and the compiled
 * code V8 keeps beside it persist between visits (a context from `launchBrowser` keeps neither).
 */
export async function launchProfile(userDataDir: string, options: BrowserContextOptions): Promise<BrowserContext> {
  return chromium.launchPersistentContext(userDataDir, { executablePath: chromiumPath(), headless: true, args: LAUNCH_ARGS, ...options });
}
