/**
 * The waits an SRE meets on the replay in Chromium (1440×900), each from the click or link to what it waits for:
 * Clients' first view (the link to its first chart), Clients' before/after (the button to the table with both sides),
 * Download snapshot (the click to the browser's download starting), and opening that file (choosing it to the first
 * chart of the view it opens on). The peers, in the same run: the same answers read straight from the store — the
 * Clients answer asked of the replay's object store on this thread, the stored bundle read from disk, and the
 * downloaded file unpacked and parsed. Bounds: 1 s, 1 s, 2 s and 3 s. ROUNDS (default 3), the median of each.
 * Run: npm run build && npx tsx test/bench/incident-waits.ts
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import Database from "better-sqlite3";
import { queryClients } from "@/lib/store/clients-query";
import type { AuditStore } from "@/lib/store/audit-store";
import { REPLAY_BUNDLE_PATH } from "@/lib/snapshot/store";
import { startApp } from "../helpers/app";
import { launchBrowser } from "../helpers/browser";
import { percentile, report, round, timed } from "./report";
import { scratchDir } from "./scratch";

const ROUNDS = Number(process.env.ROUNDS ?? 3);
const WHOLE = { startMs: 1788912000000, endMs: 1789279200000 };
const ONSET_MS = Date.parse("2026-09-11T13:12:00Z");
const RANGE = `snapshot=replay&from=${WHOLE.startMs}&to=${WHOLE.endMs}`;

/** The replay's object store as the build leaves it, asked on this thread. */
function storeOfReplay(): AuditStore {
  const db = new Database(join(".next", "replay-objects.sqlite"), { readonly: true });
  const sql = () => ({ all: async (text: string, params: unknown[] = []) => db.prepare(text).all(...params) });
  return { writes: { sql } } as unknown as AuditStore;
}

async function main() {
  const app = await startApp({});
  const browser = await launchBrowser();
  const dir = scratchDir("incident-waits");
  const audit = storeOfReplay();
  const samples: Record<string, number[]> = {
    clients: [],
    beforeAfter: [],
    download: [],
    open: [],
    peerClients: [],
    peerBeforeAfter: [],
    peerDownload: [],
    peerOpen: [],
  };
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const context = await browser.newContext({ viewport: { width: 1440, height: 900 }, acceptDownloads: true });
      const page = await context.newPage();
      samples.clients.push(
        (
          await timed(async () => {
            await page.goto(`${app.url}/clients?${RANGE}`);
            await page.waitForSelector("main .u-over", { timeout: 60_000 });
          })
        ).ms,
      );
      const offer = page.getByRole("button", { name: /^Compare before\/after 2026/ });
      await offer.waitFor({ timeout: 60_000 });
      samples.beforeAfter.push(
        (
          await timed(async () => {
            await offer.click();
            await page.waitForSelector('[data-testid="clients-table"]:not([data-updating]):has-text("before vs")', { timeout: 60_000 });
          })
        ).ms,
      );
      samples.peerClients.push((await timed(() => queryClients(audit, WHOLE))).ms);
      samples.peerBeforeAfter.push((await timed(() => queryClients(audit, { ...WHOLE, atMs: ONSET_MS }))).ms);

      await page.goto(`${app.url}/?${RANGE}&resource=connectors.networking.datumapis.com`);
      await page.waitForSelector('[data-panel="writes-by-resource"] .u-over', { timeout: 60_000 });
      const file = join(dir, `download-${round}.json.gz`);
      const started = await timed(async () => {
        const [download] = await Promise.all([page.waitForEvent("download", { timeout: 60_000 }), page.click('[data-testid="download-snapshot"]')]);
        return download;
      });
      samples.download.push(started.ms);
      await started.value.saveAs(file);
      samples.peerDownload.push((await timed(async () => readFileSync(REPLAY_BUNDLE_PATH))).ms);

      samples.open.push(
        (
          await timed(async () => {
            await page.setInputFiles('[data-testid="snapshot-file"]', file);
            await page.waitForURL((url) => (url.searchParams.get("snapshot") ?? "replay") !== "replay", { timeout: 60_000 });
            await page.waitForSelector('[data-panel="writes-by-resource"] .u-over', { timeout: 60_000 });
          })
        ).ms,
      );
      samples.peerOpen.push((await timed(async () => JSON.parse(gunzipSync(readFileSync(file)).toString("utf8")))).ms);
      await context.close();
    }
    const median = (key: string) => round(percentile(samples[key], 50), 0);
    report({
      bench: "incident-waits",
      rounds: ROUNDS,
      clientsFirstViewMs: median("clients"),
      clientsBeforeAfterMs: median("beforeAfter"),
      downloadStartMs: median("download"),
      openFileMs: median("open"),
      bounds: { clientsFirstViewMs: 1000, clientsBeforeAfterMs: 1000, downloadStartMs: 2000, openFileMs: 3000 },
      peer: "the same answers read straight from the store: Clients asked of the replay's store on this thread; the bundle read from disk; the file unpacked and parsed",
      peerClientsMs: median("peerClients"),
      peerBeforeAfterMs: median("peerBeforeAfter"),
      peerDownloadMs: median("peerDownload"),
      peerOpenMs: median("peerOpen"),
      samples,
    });
  } finally {
    await browser.close();
    await app.stop();
  }
}

void main();
