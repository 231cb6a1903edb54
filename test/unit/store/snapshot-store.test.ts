/**
 * A snapshot's object store taken from the prebuilt replay store when the snapshot holds the same writes and
 * requests (a download of the replay with a note of its own, opened again), and built when it does not.
 */
import Database from "better-sqlite3";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { encodeSnapshot } from "@/lib/snapshot/format/codec";
import { SNAPSHOT_FORMAT, type Snapshot } from "@/lib/snapshot/format/schema";
import { buildPrebuiltStore, buildSnapshotStore, snapshotStoreDigest } from "@/lib/store/snapshot-store";

const START = Date.parse("2026-09-11T12:00:00Z");

function snapshot(writes: number): Snapshot {
  return {
    format: SNAPSHOT_FORMAT,
    version: 1,
    title: "replay",
    takenAtMs: START + 1,
    source: "prometheus",
    views: ["write-load"],
    ranges: [{ startMs: START, endMs: START + 3_600_000 }],
    apiservers: [],
    panels: [],
    markers: [],
    objectWrites: {
      objects: [{ cluster: "c", apiVersion: "networking.datumapis.com/v1alpha1", kind: "Connector", namespace: "ns", name: "a", initial: {} }],
      writes: Array.from({ length: writes }, (_, i) => ({
        t: START + i * 1000,
        o: 0,
        verb: "update",
        sub: "status",
        by: "agent",
        cls: "unrouted" as const,
        changes: [],
      })),
    },
  };
}

/** What a store holds, read with SQLite directly: its meta rows and its writes. */
function read(path: string) {
  const db = new Database(path, { readonly: true });
  try {
    const meta = Object.fromEntries((db.prepare("SELECT key, value FROM meta").all() as { key: string; value: string }[]).map((r) => [r.key, r.value]));
    return { meta, writes: db.prepare("SELECT ts_ms, class, writer FROM writes ORDER BY id").all() };
  } finally {
    db.close();
  }
}

let distDir = "";
let dataDir = "";
const previousDist = process.env.CHURNSCOPE_DIST_DIR;
beforeEach(() => {
  distDir = mkdtempSync(join(tmpdir(), "churnscope-dist-"));
  dataDir = mkdtempSync(join(tmpdir(), "churnscope-snapshots-"));
  process.env.CHURNSCOPE_DIST_DIR = distDir;
});
afterEach(() => {
  if (previousDist === undefined) delete process.env.CHURNSCOPE_DIST_DIR;
  else process.env.CHURNSCOPE_DIST_DIR = previousDist;
});

async function open(bundle: Buffer, profiles = DEFAULT_PROFILES) {
  const path = join(dataDir, `${Math.random().toString(36).slice(2)}.sqlite`);
  const digest = snapshotStoreDigest(bundle, profiles);
  const count = await buildSnapshotStore({ path, bundle, maxBytes: 1 << 20, profiles, digest });
  return { count, digest, ...read(path) };
}

describe("a snapshot's object store", () => {
  it("is the prebuilt replay store's copy when only the notes, markers or view differ, marked with its own bundle's digest", async () => {
    const replay = snapshot(3);
    expect(await buildPrebuiltStore(encodeSnapshot(replay), DEFAULT_PROFILES, distDir)).toBe(3);
    expect(await buildPrebuiltStore(encodeSnapshot(replay), DEFAULT_PROFILES, distDir)).toBeNull();
    const prebuilt = read(join(distDir, "replay-objects.sqlite"));
    const withNote: Snapshot = {
      ...replay,
      title: "replay, with a note",
      markers: [{ timeMs: START + 1500, label: "paged", detail: "by me", kind: "note" }],
      initialView: { range: { startMs: START, endMs: START + 1800_000 } },
    };
    const opened = await open(encodeSnapshot(withNote));
    expect(opened.meta.built).toBe("at build time");
    expect(opened.meta.digest).toBe(opened.digest);
    expect(opened.meta.digest).not.toBe(prebuilt.meta.digest);
    expect(opened.count).toBe(replay.objectWrites!.writes.length);
    expect(opened.writes).toEqual(prebuilt.writes);
  });

  it("is built when its writes or the profiles differ", async () => {
    await buildPrebuiltStore(encodeSnapshot(snapshot(3)), DEFAULT_PROFILES, distDir);
    const more = await open(encodeSnapshot(snapshot(4)));
    expect(more.meta.built).toBeUndefined();
    expect(more.count).toBe(4);
    expect(more.writes).toHaveLength(4);
    const otherProfiles = await open(encodeSnapshot(snapshot(3)), DEFAULT_PROFILES.slice(1));
    expect(otherProfiles.meta.built).toBeUndefined();
    expect(otherProfiles.writes).toHaveLength(3);
  });
});
