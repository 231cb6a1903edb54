/**
 * Uploaded snapshot bundles where each engine keeps them, one suite: files beside the SQLite store, a table of a real
 * PostgreSQL server's database. Then a bundle kept by one replica opens through another replica's SnapshotStore on the
 * same database.
 */
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { openPostgres } from "@/lib/store/engine/open-postgres";
import { EngineBundles } from "@/lib/store/snapshot-bundles";
import { decodeSnapshot } from "@/lib/snapshot/format/codec";
import { openHere, REPLAY_BUNDLE_PATH, SnapshotStore } from "@/lib/snapshot/store";
import { ROOT } from "../helpers/root";
import { postgresSettings, storeEngines, testPostgres } from "../helpers/store-engines";

describe.each(storeEngines())("snapshot bundles on %s", (_name, store) => {
  it("keep each bundle's bytes under its id, once, and know no other id", async () => {
    const bundles = await store.bundles();
    const first = randomBytes(300_000);
    await bundles.write("aaaaaaaaaaaaaaaa", first);
    // The same id is the same content: a second upload of it changes nothing.
    await bundles.write("aaaaaaaaaaaaaaaa", randomBytes(10));
    await bundles.write("bbbbbbbbbbbbbbbb", new Uint8Array([1, 2, 3]));
    expect(Buffer.compare((await bundles.read("aaaaaaaaaaaaaaaa"))!, first)).toBe(0);
    expect([...(await bundles.read("bbbbbbbbbbbbbbbb"))!]).toEqual([1, 2, 3]);
    expect(await bundles.read("cccccccccccccccc")).toBeUndefined();
  });
  it("name the bundles kept last, newest first, for a link to one it does not hold", async () => {
    const bundles = await store.bundles();
    const ids = ["1111111111111111", "2222222222222222", "3333333333333333"];
    for (const id of ids) {
      await bundles.write(id, new Uint8Array([7]));
      await new Promise((r) => setTimeout(r, 20));
    }
    const recent = await bundles.recent(2);
    expect(recent.map((b) => b.id)).toEqual([ids[2], ids[1]]);
    expect(recent[0].storedMs).toBeGreaterThan(recent[1].storedMs);
    expect(Math.abs(recent[0].storedMs - Date.now())).toBeLessThan(60_000);
  });
});

describe("a snapshot uploaded on one replica", () => {
  it("opens on another replica of the same PostgreSQL database, the same bundle byte for byte", async () => {
    const url = await (await testPostgres()).database("replicas_share");
    const [one, two] = await Promise.all([openPostgres(postgresSettings(url)), openPostgres(postgresSettings(url))]);
    // The replay's bundle, kept as an upload is (put checks it in a thread first, which only the built app can start).
    const bundle = readFileSync(join(ROOT, REPLAY_BUNDLE_PATH));
    const id = "0123456789abcdef";
    await new EngineBundles(one).write(id, bundle);
    const openedOn = new SnapshotStore(new EngineBundles(two), 64 << 20, { open: openHere });
    expect((await openedOn.open(id)).title).toBe(decodeSnapshot(bundle, 64 << 20).title);
    expect(Buffer.compare(await openedOn.read(id), bundle)).toBe(0);
    await Promise.all([one.close(), two.close()]);
  }, 120_000);
});
