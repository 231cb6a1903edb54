import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { encodeSnapshot } from "@/lib/snapshot/format/codec";
import { opened, type OpenedSnapshot } from "@/lib/snapshot/lookup";
import { SNAPSHOT_FORMAT, type Snapshot } from "@/lib/snapshot/format/schema";
import { FileBundles } from "@/lib/snapshot/bundles";
import { writePrebuiltHeld } from "@/lib/snapshot/prebuilt-held";
import { checkHere, openHere, SnapshotStore, type SnapshotOpener } from "@/lib/snapshot/store";

const START = Date.parse("2026-09-11T12:00:00Z");

function sample(title: string): Snapshot {
  return {
    format: SNAPSHOT_FORMAT,
    version: 1,
    title,
    takenAtMs: START + 1,
    source: "prometheus",
    views: ["write-load"],
    ranges: [{ startMs: START, endMs: START + 1 }],
    apiservers: [],
    panels: [],
    markers: [],
    objectWrites: {
      objects: [{ cluster: "c", apiVersion: "networking.datumapis.com/v1alpha1", kind: "Connector", namespace: "ns", name: "a", initial: {} }],
      writes: [{ t: START, o: 0, verb: "update", sub: "status", by: "agent", cls: "unrouted", changes: [] }],
    },
  };
}

function storedDir(snapshots: Record<string, Snapshot>): string {
  const dir = join(mkdtempSync(join(tmpdir(), "churnscope-snapshots-")), "snapshots");
  mkdirSync(dir);
  for (const [id, snapshot] of Object.entries(snapshots)) writeFileSync(join(dir, `${id}.json.gz`), encodeSnapshot(snapshot));
  return dir;
}

/** Three stored bundles, and a store that keeps about two of them opened. */
function storeOfThree(): { store: SnapshotStore; ids: string[] } {
  const ids = ["aaaaaaaaaaaaaaaa", "bbbbbbbbbbbbbbbb", "cccccccccccccccc"];
  const dir = storedDir(Object.fromEntries(ids.map((id) => [id, sample(`snapshot ${id}`)])));
  const heldBytes = opened(sample(`snapshot ${ids[0]}`)).heldBytes;
  return { store: new SnapshotStore(new FileBundles(dir), 1 << 20, { cacheBytes: 2 * heldBytes + 10, open: openHere }), ids };
}

describe("the opened snapshots kept in memory", () => {
  it("are kept up to a budget of bytes, the oldest let go first, so a few large bundles cannot fill the pod", async () => {
    const { store, ids } = storeOfThree();
    const a = await store.open(ids[0]);
    const b = await store.open(ids[1]);
    const c = await store.open(ids[2]);
    expect(a.title).toBe(`snapshot ${ids[0]}`);
    // b and c fit the budget together and are answered without opening again: the very same objects.
    expect(await store.open(ids[2])).toBe(c);
    expect(await store.open(ids[1])).toBe(b);
    // a was let go when c came in: opened again from its file, equal but not the same object.
    const again = await store.open(ids[0]);
    expect(again).toEqual(a);
    expect(again).not.toBe(a);
  });

  it("always keep the newest, even when it alone is over the budget", async () => {
    const store = new SnapshotStore(new FileBundles(storedDir({ dddddddddddddddd: sample("large") })), 1 << 20, { cacheBytes: 1, open: openHere });
    const first = await store.open("dddddddddddddddd");
    expect(await store.open("dddddddddddddddd")).toBe(first);
  });

  it("hold all but the object writes, and their count (null when the snapshot has none)", async () => {
    const none = { ...sample("no recorder"), objectWrites: null };
    const store = new SnapshotStore(new FileBundles(storedDir({ aaaaaaaaaaaaaaaa: sample("recorded"), bbbbbbbbbbbbbbbb: none })), 1 << 20, { open: openHere });
    const recorded = await store.open("aaaaaaaaaaaaaaaa");
    expect(recorded).not.toHaveProperty("objectWrites");
    expect(recorded.objectWriteCount).toBe(1);
    expect((await store.open("bbbbbbbbbbbbbbbb")).objectWriteCount).toBeNull();
  });

  it("are opened once for all who ask while it is being opened, and a failure is not kept", async () => {
    let opens = 0;
    let fail = true;
    const counting: SnapshotOpener = async (bytes, maxBytes, heapMiB, shipped): Promise<OpenedSnapshot> => {
      opens++;
      await new Promise((resolve) => setTimeout(resolve, 20));
      if (fail) throw new Error("the thread ran out of memory");
      return openHere(bytes, maxBytes, heapMiB, shipped);
    };
    const store = new SnapshotStore(new FileBundles(storedDir({ aaaaaaaaaaaaaaaa: sample("shared") })), 1 << 20, { open: counting });
    const failed = await Promise.allSettled([store.open("aaaaaaaaaaaaaaaa"), store.open("aaaaaaaaaaaaaaaa")]);
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(opens).toBe(1);
    fail = false;
    const [x, y, z] = await Promise.all([store.open("aaaaaaaaaaaaaaaa"), store.open("aaaaaaaaaaaaaaaa"), store.open("aaaaaaaaaaaaaaaa")]);
    expect(opens).toBe(2);
    expect(y).toBe(x);
    expect(z).toBe(x);
  });

  it("keep an upload opened as it is checked, so the page it goes to next does not open it again", async () => {
    let opens = 0;
    const counting: SnapshotOpener = async (...args) => {
      opens++;
      return openHere(...args);
    };
    const dir = storedDir({});
    const store = new SnapshotStore(new FileBundles(dir), 1 << 20, { open: counting, check: checkHere });
    const uploaded = await store.put(encodeSnapshot(sample("uploaded")));
    const held = await store.open(uploaded.id);
    expect(opens).toBe(0);
    expect(held.title).toBe("uploaded");
    // As opening it from what was stored would have kept it.
    const fresh = new SnapshotStore(new FileBundles(dir), 1 << 20, { open: openHere });
    expect(held).toEqual(await fresh.open(uploaded.id));
  });

  it("check a stored upload's bundle again as it opens, and read the shipped replay as this code built it", async () => {
    // A range that ends before it starts: a check decodeSnapshot makes and reading a bundle as stored does not.
    const broken = { ...sample("broken"), ranges: [{ startMs: START + 1, endMs: START }] };
    const dir = storedDir({ aaaaaaaaaaaaaaaa: broken });
    const replayPath = join(dir, "aaaaaaaaaaaaaaaa.json.gz");
    const store = new SnapshotStore(new FileBundles(dir), 1 << 20, { open: openHere, replayPath });
    await expect(store.open("aaaaaaaaaaaaaaaa")).rejects.toMatchObject({ httpStatus: 400, message: expect.stringMatching(/ranges\.0 ends before it starts/) });
    expect((await store.open("replay")).title).toBe("broken");
  });

  it("open the replay from the held part the build wrote for its bundle, and from the bundle when that part was written for another", async () => {
    const dir = storedDir({ aaaaaaaaaaaaaaaa: sample("replay as built"), bbbbbbbbbbbbbbbb: sample("another replay") });
    const replayPath = join(dir, "aaaaaaaaaaaaaaaa.json.gz");
    const replayHeldPath = join(dir, "replay-held.json");
    let bundleOpenings = 0;
    const counting: SnapshotOpener = (...args) => (bundleOpenings++, openHere(...args));
    const fromBundle = await new SnapshotStore(new FileBundles(dir), 1 << 20, { open: openHere, replayPath }).open("replay");

    writePrebuiltHeld(readFileSync(replayPath), 1 << 20, replayHeldPath);
    const prebuilt = await new SnapshotStore(new FileBundles(dir), 1 << 20, { open: counting, replayPath, replayHeldPath }).open("replay");
    expect(bundleOpenings).toBe(0);
    expect(prebuilt).toEqual(fromBundle);

    // Written for another bundle (a replay built again after the app was): not read.
    writePrebuiltHeld(readFileSync(join(dir, "bbbbbbbbbbbbbbbb.json.gz")), 1 << 20, replayHeldPath);
    const stale = await new SnapshotStore(new FileBundles(dir), 1 << 20, { open: counting, replayPath, replayHeldPath }).open("replay");
    expect(bundleOpenings).toBe(1);
    expect(stale.title).toBe("replay as built");
  });

  it("answer an unknown or malformed id as the API should", async () => {
    const store = new SnapshotStore(new FileBundles(storedDir({})), 1 << 20, { open: openHere });
    await expect(store.open("0123456789abcdef")).rejects.toMatchObject({ httpStatus: 404, errorType: "not_found" });
    await expect(store.open("../etc/passwd")).rejects.toMatchObject({ httpStatus: 400 });
  });
});
