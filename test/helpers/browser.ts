/** Debian's Chromium driven by playwright-core (no browser download), with the flags this sandbox needs. */
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { chromium, type Browser } from "playwright-core";
import { requireBinary } from "./processes";
import { ROOT } from "./root";

export const ARTIFACTS = join(ROOT, "test-results");

export async function launchBrowser(): Promise<Browser> {
  const executablePath = requireBinary("chromium", "install Debian's package: apt-get install -y chromium");
  mkdirSync(ARTIFACTS, { recursive: true });
  return chromium.launch({
    executablePath,
    headless: true,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run", "--disable-background-networking", "--disable-component-update", "--disable-sync"],
  });
}
