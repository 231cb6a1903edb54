/**
 * An upload whose shape makes it costly to check, small as it is, is refused within the check's bounds
 * (limits.maxSnapshotCheckMiB, and a time allowance by size) while the process stays up and keeps
 * what it stored: 8 KB of packed empty objects unpack to 8 MiB that take about 180 MB to parse.
 */
import { mkdtempSync, readdirSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { encodeSnapshot } from "@/lib/snapshot/codec";
import { SNAPSHOT_FORMAT } from "@/lib/snapshot/schema";
import { startApp, writeConfig, type TestApp } from "../helpers/app";

let app: TestApp;
let dataDir: string;

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "churnscope-data-"));
  app = await startApp({ CHURNSCOPE_DATA_DIR: dataDir, CHURNSCOPE_CONFIG: writeConfig("limits:\n  maxSnapshotMiB: 1\n  maxSnapshotCheckMiB: 64\n") });
}, 120_000);
afterAll(async () => {
  await app?.stop();
});

describe("checking an upload is bounded", () => {
  it("refuses a bundle that would take more memory to check than allowed, and keeps what was stored", async () => {
    const startMs = Date.parse("2026-09-11T12:00:00Z");
    const small = encodeSnapshot({
      format: SNAPSHOT_FORMAT, version: 1, title: "a small one", takenAtMs: startMs + 1, source: "prometheus", views: ["write-load"],
      ranges: [{ startMs, endMs: startMs + 1 }], apiservers: [], panels: [], markers: [], objectWrites: { objects: [], writes: [] },
    });
    const stored = await fetch(`${app.url}/api/snapshots`, { method: "POST", body: new Uint8Array(small) });
    expect(stored.status).toBe(200);
    const { data: info } = await stored.json();

    const objects = Math.floor((8 * 1_048_576 - 4) / 3);
    const costly = gzipSync(Buffer.concat([Buffer.from("["), Buffer.alloc(objects * 3, "{},"), Buffer.from("{}]")]), { level: 9 });
    expect(costly.length).toBeLessThan(64 * 1024);
    const res = await fetch(`${app.url}/api/snapshots`, { method: "POST", body: new Uint8Array(costly) });
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(413);
    expect(body.errorType).toBe("too_large");
    expect(body.error).toMatch(/needs more than 64 MiB of memory \(limits\.maxSnapshotCheckMiB\)|took longer than \d+ s/);

    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    const again = await fetch(`${app.url}/api/snapshots/${info.id}`);
    expect(again.status).toBe(200);
    expect((await again.json()).data).toEqual(info);
    expect(readdirSync(join(dataDir, "snapshots"))).toEqual([`${info.id}.json.gz`]);
  }, 60_000);
});
