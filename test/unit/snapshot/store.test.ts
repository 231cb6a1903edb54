import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { encodeSnapshot } from "@/lib/snapshot/codec";
import { SNAPSHOT_FORMAT, type Snapshot } from "@/lib/snapshot/schema";
import { SnapshotStore } from "@/lib/snapshot/store";

const START = Date.parse("2026-09-11T12:00:00Z");

function bundle(title: string): Buffer {
  const snapshot: Snapshot = {
    format: SNAPSHOT_FORMAT, version: 1, title, takenAtMs: START + 1, source: "prometheus", views: ["write-load"],
    ranges: [{ startMs: START, endMs: START + 1 }], apiservers: [], panels: [], markers: [], objectWrites: { objects: [], writes: [] },
  };
  return encodeSnapshot(snapshot);
}

/** Three stored bundles, and a store that keeps about two of them parsed. */
function storeOfThree(): { store: SnapshotStore; ids: string[] } {
  const dir = join(mkdtempSync(join(tmpdir(), "churnscope-snapshots-")), "snapshots");
  mkdirSync(dir);
  const ids = ["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc"];
  const bundles = ids.map((id) => bundle(`snapshot ${id}`));
  ids.forEach((id, i) => writeFileSync(join(dir, `${id}.json.gz`), bundles[i]));
  const unpacked = gunzipSync(bundles[0]).length;
  return { store: new SnapshotStore(dir, 1 << 20, { cacheBytes: 2 * unpacked + 10 }), ids };
}

describe("the parsed snapshots kept in memory", () => {
  it("are kept up to a budget of unpacked bytes, the oldest let go first, so a few large bundles cannot fill the pod", () => {
    const { store, ids } = storeOfThree();
    const [a, b, c] = ids.map((id) => store.get(id));
    expect(a.title).toBe(`snapshot ${ids[0]}`);
    // b and c fit the budget together and are answered without parsing again: the very same objects.
    expect(store.get(ids[2])).toBe(c);
    expect(store.get(ids[1])).toBe(b);
    // a was let go when c came in: parsed again from its file, equal but not the same object.
    const again = store.get(ids[0]);
    expect(again).toEqual(a);
    expect(again).not.toBe(a);
  });

  it("always keep the newest, even when it alone is over the budget", () => {
    const dir = join(mkdtempSync(join(tmpdir(), "churnscope-snapshots-")), "snapshots");
    mkdirSync(dir);
    writeFileSync(join(dir, "dddddddddddddddd.json.gz"), bundle("large"));
    const store = new SnapshotStore(dir, 1 << 20, { cacheBytes: 1 });
    const first = store.get("dddddddddddddddd");
    expect(store.get("dddddddddddddddd")).toBe(first);
  });
});
