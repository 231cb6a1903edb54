/**
 * "Download snapshot" on the replay: the time from asking `/api/snapshots/export` for the Write load view (the whole
 * incident, Connectors selected) to the last byte of the bundle, which the server packs on every download. The peer,
 * in the same run: Debian's `gzip -6` and `gzip -9` packing the very JSON that bundle unpacks to, from a file. ROUNDS
 * (default 5) alternate the two.
 * Run: npm run build && npx tsx test/bench/snapshot-download.ts
 */
import { spawnSync } from "node:child_process";
import { writeFileSync } from "node:fs";
import { get } from "node:http";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { requireBinary } from "@/lib/cli/processes";
import { startApp } from "../helpers/app";
import { percentile, report, round, timed } from "./report";
import { scratchDir } from "./scratch";

const ROUNDS = Number(process.env.ROUNDS ?? 5);
const FROM_MS = Date.parse("2026-09-11T00:00:00Z");
const TO_MS = Date.parse("2026-09-13T06:00:00Z");

function gzipMs(level: number, file: string): { ms: number; bytes: number } {
  const gzip = requireBinary("gzip", "install Debian's gzip");
  const startMs = performance.now();
  const packed = spawnSync(gzip, [`-${level}`, "-c", file], { maxBuffer: 1 << 30 });
  if (packed.status !== 0) throw new Error(`gzip -${level} failed: ${packed.stderr}`);
  return { ms: performance.now() - startMs, bytes: packed.stdout.length };
}

async function main() {
  const app = await startApp({});
  const dir = scratchDir("snapshot-download");
  try {
    const search = new URLSearchParams({
      resource: "connectors.networking.datumapis.com",
      from: String(FROM_MS),
      to: String(TO_MS),
      snapshot: "replay",
      page: "/",
    });
    // A connection of its own each time: the gzip runs between downloads outlast the server's keep-alive.
    const download = () =>
      new Promise<Buffer>((resolve, reject) => {
        get(`${app.url}/api/snapshots/export?${search}`, { agent: false }, (res) => {
          const chunks: Buffer[] = [];
          res.on("data", (chunk: Buffer) => chunks.push(chunk));
          res.on("end", () => (res.statusCode === 200 ? resolve(Buffer.concat(chunks)) : reject(new Error(`the download answered ${res.statusCode}`))));
          res.on("error", reject);
        }).on("error", reject);
      });
    const first = await download();
    const unpacked = gunzipSync(first);
    const json = join(dir, "bundle.json");
    writeFileSync(json, unpacked);
    const samples = { ours: [] as number[], six: [] as number[], nine: [] as number[] };
    let sizes = { six: 0, nine: 0 };
    for (let i = 0; i < ROUNDS; i++) {
      samples.ours.push((await timed(download)).ms);
      const [six, nine] = [gzipMs(6, json), gzipMs(9, json)];
      samples.six.push(six.ms);
      samples.nine.push(nine.ms);
      sizes = { six: six.bytes, nine: nine.bytes };
    }
    const [ours, six, nine] = [samples.ours, samples.six, samples.nine].map((ms) => percentile(ms, 50));
    report({
      bench: "snapshot-download",
      rounds: ROUNDS,
      unpackedMB: round(unpacked.length / 1e6),
      bundleMB: round(first.length / 1e6),
      p50Ms: round(ours, 0),
      peer: "gzip -6 -c of the bundle's JSON, from a file",
      peerP50Ms: round(six, 0),
      peerMB: round(sizes.six / 1e6),
      ratio: round(ours / six),
      gzip9P50Ms: round(nine, 0),
      gzip9MB: round(sizes.nine / 1e6),
    });
  } finally {
    await app.stop();
  }
}

void main();
