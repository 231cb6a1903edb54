/**
 * Recorded changes in the store, on both engines: kept with the write that made them (in a recorder's burst too), a
 * workload's baseline, each object's latest at a time, the writers' rates counted per step, and retention.
 */
import { describe, expect, it } from "vitest";
import type { RecordedChange } from "@/lib/churn/changes";
import type { StoredWrite } from "@/lib/wire/objects";
import { storeEngines } from "../../helpers/store-engines";

const T0 = Date.parse("2026-09-11T10:00:00Z");
const key = (name: string) => ({ cluster: "hub", group: "apps", kind: "Deployment", namespace: "apps", name });
const recorded = (summary: string, image: string): RecordedChange => ({
  summary,
  diff: [{ path: "spec.containers[name=app].image", before: "x", after: image }],
  subject: { serviceAccount: "app", images: [image] },
});
const write = (tsMs: number, writer: string, change?: RecordedChange): StoredWrite => ({
  tsMs,
  cls: change ? "routed" : "unrouted",
  writer,
  source: "watch",
  heartbeat: false,
  changes: [],
  projection: {},
  ...(change && { change }),
});

describe.each(storeEngines())("recorded changes on %s", (_name, engine) => {
  it("keeps a change with its write, in a burst too, and lists a range's oldest first with their count", async () => {
    const store = await engine.writeStore();
    await store.batch(async () => {
      await store.record(key("a"), write(T0 + 1_000, "kubectl", recorded("image a v1 → v2", "a:v2")));
      await store.record(key("a"), write(T0 + 2_000, "a"));
      await store.record(key("b"), write(T0 + 3_000, "flux", recorded("image b v1 → v2", "b:v2")));
    }, [T0]);
    await store.record(key("a"), write(T0 + 9_000, "kubectl", recorded("image a v2 → v3", "a:v3")));
    const all = await store.changesBetween(T0, T0 + 10_000, 10);
    expect(all.total).toBe(3);
    expect(all.changes.map((c) => [c.tsMs, c.key.name, c.writer, c.summary, c.subject.images[0]])).toEqual([
      [T0 + 1_000, "a", "kubectl", "image a v1 → v2", "a:v2"],
      [T0 + 3_000, "b", "flux", "image b v1 → v2", "b:v2"],
      [T0 + 9_000, "a", "kubectl", "image a v2 → v3", "a:v3"],
    ]);
    expect(all.changes[0].diff).toEqual([{ path: "spec.containers[name=app].image", before: "x", after: "a:v2" }]);
    // (from, to]: a change at the range's start is the range before's.
    expect((await store.changesBetween(T0 + 1_000, T0 + 10_000, 1)).changes.map((c) => c.tsMs)).toEqual([T0 + 3_000]);
    expect((await store.changesBetween(T0 + 1_000, T0 + 10_000, 1)).total).toBe(2);
  });

  it("answers each object's latest change or baseline at a time, a baseline moved back by an earlier sighting only", async () => {
    const store = await engine.writeStore();
    const since = Date.parse("2026-09-07T09:12:00Z");
    await store.recordFirstSeen(key("nso"), T0, {}, undefined, { ...recorded("running nso v0.26.4", "nso:v0.26.4"), sinceMs: since });
    await store.recordFirstSeen(key("nso"), T0 + 5_000, {}, undefined, recorded("running nso v0.26.9", "nso:v0.26.9"));
    await store.recordFirstSeen(key("web"), T0, {}, undefined, recorded("running web v1", "web:v1"));
    await store.record(key("web"), write(T0 + 60_000, "kubectl", recorded("image web v1 → v2", "web:v2")));
    // Not listed as a change of the range: a baseline is what ran, not a change.
    expect((await store.changesBetween(0, T0 + 120_000, 10)).changes.map((c) => c.summary)).toEqual(["image web v1 → v2"]);
    const at = async (ms: number) => (await store.changesLatestAt(ms, 10)).map((c) => [c.key.name, c.tsMs, c.summary, c.baseline]).sort();
    expect(await at(T0 + 30_000)).toEqual([
      ["nso", since, "running nso v0.26.4", true],
      ["web", T0, "running web v1", true],
    ]);
    expect(await at(T0 + 60_000)).toEqual([
      ["nso", since, "running nso v0.26.4", true],
      ["web", T0 + 60_000, "image web v1 → v2", false],
    ]);
  });

  it("counts the busiest writers' writes per step, each write in the step that ends at or after it", async () => {
    const store = await engine.writeStore();
    const times: [string, number][] = [
      ["a", T0 + 1],
      ["a", T0 + 60_000],
      ["a", T0 + 60_001],
      ["b", T0 + 120_000],
      ["a", T0 + 179_999],
      ["c", T0 + 30_000],
      ["a", T0], // before the range
    ];
    await store.batch(async () => {
      for (const [writer, ts] of times) await store.record(key(writer), write(ts, writer));
    }, [T0]);
    const rates = await store.writerRates(T0, T0 + 180_000, 60_000, 2);
    // The two busiest, by a count read off the list above: a 4, then b and c 1 each (b before c by name).
    expect(rates.map((r) => [r.writer, [...r.counts.entries()].sort()])).toEqual([
      [
        "a",
        [
          [0, 2],
          [1, 1],
          [2, 1],
        ],
      ],
      ["b", [[1, 1]]],
    ]);
  });

  it("prunes changes older than retention but keeps each object's latest", async () => {
    const store = await engine.writeStore();
    const day = 86_400_000;
    await store.record(key("old"), write(T0 - 30 * day, "kubectl", recorded("image old v1 → v2", "old:v2")));
    await store.record(key("busy"), write(T0 - 30 * day, "kubectl", recorded("image busy v1 → v2", "busy:v2")));
    await store.record(key("busy"), write(T0 - 20 * day, "kubectl", recorded("image busy v2 → v3", "busy:v3")));
    await store.record(key("busy"), write(T0, "kubectl", recorded("image busy v3 → v4", "busy:v4")));
    await store.prune(T0 - 14 * day);
    const left = (await store.changesBetween(0, T0 + 1, 10)).changes.map((c) => c.summary);
    expect(left).toEqual(["image old v1 → v2", "image busy v3 → v4"]);
  });
});
