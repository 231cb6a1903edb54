/**
 * An upload whose shape makes it costly to check, small as it is, is refused within the check's bounds
 * (limits.maxSnapshotCheckMiB, and a time allowance by size) while the process stays up and keeps
 * what it stored: 8 KB of packed empty objects unpack to 8 MiB that take about 180 MB to parse.
 */
import { mkdtempSync, readdirSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeSnapshot } from "@/lib/snapshot/format/codec";
import { SNAPSHOT_FORMAT } from "@/lib/snapshot/format/schema";
import { REPLAY_BUNDLE_PATH } from "@/lib/snapshot/store";
import { ROOT } from "../helpers/root";
import { rssMiB, startApp, uploadSnapshot, writeConfig, type TestApp } from "../helpers/app";

let app: TestApp;
/** With the default limits, as a deployment runs. */
let defaults: TestApp;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "churnscope-data-"));
  app = await startApp({ CHURNSCOPE_DATA_DIR: dataDir, CHURNSCOPE_CONFIG: writeConfig("limits:\n  maxSnapshotMiB: 1\n  maxSnapshotCheckMiB: 64\n") });
  defaults = await startApp({ CHURNSCOPE_DATA_DIR: mkdtempSync(join(tmpdir(), "churnscope-data-")) });
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await defaults?.stop();
});

describe("with the default limits", () => {
  it("refuses 130 KB that unpack to 44 million empty arrays before parsing them, in seconds, within memory", async () => {
    // As reported: {"format":…,"panels":[[],[],…]} took the checking thread to 3.1 GB in JSON.parse, and never answered.
    const arrays = 44_000_000;
    const text = Buffer.concat([Buffer.from(`{"format":"${SNAPSHOT_FORMAT}","version":1,"panels":[`), Buffer.alloc(arrays * 3 - 1, "[],"), Buffer.from("]}")]);
    const bomb = gzipSync(text, { level: 9 });
    expect(bomb.length).toBeLessThan(300 * 1024);
    const startedMs = Date.now();
    const res = await uploadSnapshot(defaults.url, new Uint8Array(bomb));
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(413);
    expect(body.error).toMatch(/holds more than 4,000,000 arrays and objects/);
    expect(Date.now() - startedMs).toBeLessThan(20_000);
    expect(rssMiB(defaults)).toBeLessThan(1024);
    expect((await fetch(`${defaults.url}/healthz`)).status).toBe(200);
  }, 60_000);

  it("checks one upload at a time, queues four, and tells the rest to retry (503 busy, Retry-After); the queued ones succeed", async () => {
    const replay = readFileSync(join(ROOT, REPLAY_BUNDLE_PATH));
    const answers = await Promise.all(Array.from({ length: 8 }, () => uploadSnapshot(defaults.url, new Uint8Array(replay))));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 200, 200, 503, 503, 503]);
    for (const res of answers.filter((r) => r.status === 503)) {
      expect(res.headers.get("retry-after")).toBe("10");
      expect((await res.json()).error).toMatch(/busy with checking other snapshot uploads: 1 running and 4 waiting/);
    }
    expect(rssMiB(defaults)).toBeLessThan(1536);
  }, 120_000);
});

describe("checking an upload is bounded", () => {
  it("opens and downloads the replay however small the uploads' bound, and carries on", async () => {
    // The replay is ours and needs more than 64 MiB: under the uploads' bound its thread took the whole server down.
    const range = "snapshot=replay&from=1788912000000&to=1789279200000";
    const panel = await fetch(`${app.url}/api/panels/writes-by-resource?${range}`);
    expect(panel.status).toBe(200);
    expect((await panel.json()).data.series.length).toBeGreaterThan(0);
    const download = await fetch(`${app.url}/api/snapshots/export?${range}&view=write-load`);
    expect(download.status).toBe(200);
    expect((await download.arrayBuffer()).byteLength).toBeGreaterThan(1_000_000);
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
  }, 60_000);

  it("refuses a bundle that would take more memory to check than allowed, and keeps what was stored", async () => {
    const startMs = Date.parse("2026-09-11T12:00:00Z");
    const small = encodeSnapshot({
      format: SNAPSHOT_FORMAT,
      version: 1,
      title: "a small one",
      takenAtMs: startMs + 1,
      source: "prometheus",
      views: ["write-load"],
      ranges: [{ startMs, endMs: startMs + 1 }],
      apiservers: [],
      panels: [],
      markers: [],
      objectWrites: { objects: [], writes: [] },
    });
    const stored = await uploadSnapshot(app.url, new Uint8Array(small));
    expect(stored.status).toBe(200);
    const { data: info } = await stored.json();

    const objects = Math.floor((8 * 1_048_576 - 4) / 3);
    const costly = gzipSync(Buffer.concat([Buffer.from("["), Buffer.alloc(objects * 3, "{},"), Buffer.from("{}]")]), { level: 9 });
    expect(costly.length).toBeLessThan(64 * 1024);
    const res = await uploadSnapshot(app.url, new Uint8Array(costly));
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(413);
    expect(body.errorType).toBe("too_large");
    expect(body.error).toMatch(
      /needs more than 64 MiB of memory \(limits\.maxSnapshotCheckMiB\)|took longer than \d+ s|holds more than [\d,]+ arrays and objects/,
    );

    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    const again = await fetch(`${app.url}/api/snapshots/${info.id}`);
    expect(again.status).toBe(200);
    expect((await again.json()).data).toEqual(info);
    // The bundles stored (beside them, the replay's object store, opened ahead as the server started).
    expect(readdirSync(join(dataDir, "snapshots")).filter((name) => name.endsWith(".json.gz"))).toEqual([`${info.id}.json.gz`]);
  }, 60_000);
});
