/** Debian's Chromium driven by playwright-core (no browser download), with the flags this sandbox needs. */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser, type BrowserContext, type BrowserContextOptions } from "playwright-core";
import { requireBinary } from "./processes";
import { ROOT } from "./root";

export const ARTIFACTS = join(ROOT, "test-results");

/**
 * A bound for the replay's bundle to be downloaded, or uploaded and opened: each is packed with gzip at its best
 * (7 and 11 s on a loaded 2-core machine), and 30 s was not enough with the machine busier still.
 */
export const BUNDLE_TRANSFER_MS = 90_000;

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

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({ executablePath: chromiumPath(), headless: true, args: LAUNCH_ARGS });
}

/**
 * A browser with a profile on disk, as someone's own browser is: its HTTP cache and the compiled
 * code V8 keeps beside it persist between visits (a context from `launchBrowser` keeps neither).
 */
export async function launchProfile(userDataDir: string, options: BrowserContextOptions): Promise<BrowserContext> {
  return chromium.launchPersistentContext(userDataDir, { executablePath: chromiumPath(), headless: true, args: LAUNCH_ARGS, ...options });
}
