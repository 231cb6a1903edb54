/**
 * An object's timeline on both store engines (a real SQLite file, a real PostgreSQL server): twelve thousand writes (more than the old 5,000 cap) all counted
 * into pixel columns, field lanes and projection segments exactly as a plain pass over the generated
 * writes counts them; a picked write comes whole, with its place and neighbours.
 */
import { beforeAll, describe, expect, it } from "vitest";
import type { WriteStore } from "@/lib/store/store";
import { buildTimeline } from "@/lib/objects/timeline";
import type { ObjectKey, StoredWrite } from "@/lib/wire/objects";
import { storeEngines, type StoreEngine } from "../../helpers/store-engines";

const KEY: ObjectKey = { cluster: "milo", group: "networking.datumapis.com", kind: "Connector", namespace: "ns", name: "busy" };
const START = 1_000_000;
const END = START + 12 * 3_600_000;
const COLUMNS = 700;
const CLASSES: StoredWrite["cls"][] = ["unrouted", "no-op", "routed", "unrouted", "unrouted"];

/** A seeded generator, so the writes and their ground truth are the same on every run. */
function generated(): StoredWrite[] {
  let seed = 7;
  const next = () => (seed = (seed * 1_103_515_245 + 12_345) % 2_147_483_648) / 2_147_483_648;
  const writes: StoredWrite[] = [];
  let online = "false";
  for (let i = 0; i < 12_000; i++) {
    const tsMs = START + 1 + Math.floor(next() * (END - START - 1));
    const cls = CLASSES[Math.floor(next() * CLASSES.length)];
    if (cls === "routed") online = online === "true" ? "false" : "true";
    const paths =
      cls === "no-op" ? [] : cls === "routed" ? ["status.ready"] : next() < 0.5 ? ["status.message"] : ["status.message", `status.f${Math.floor(next() * 9)}`];
    writes.push({
      tsMs,
      cls,
      writer: "op",
      source: "replay",
      heartbeat: false,
      changes: paths.map((path) => ({ path, before: 1, after: 2 })),
      projection: { online },
    });
  }
  // Stored in time order, so "after" is the projection each one left.
  writes.sort((a, b) => a.tsMs - b.tsMs);
  let last = "false";
  for (const w of writes) {
    if (w.cls === "routed") last = last === "true" ? "false" : "true";
    w.projection = { online: last };
  }
  return writes;
}

async function stored(engine: StoreEngine, writes: StoredWrite[]): Promise<WriteStore> {
  const store = await engine.writeStore();
  await store.batch(async () => {
    await store.record(KEY, { ...writes[0], tsMs: START - 10, cls: "create", changes: [], projection: { online: "false" } });
    for (const w of writes) await store.record(KEY, w);
  });
  return store;
}

const column = (tsMs: number) => Math.min(COLUMNS - 1, Math.floor(((tsMs - START) / (END - START)) * COLUMNS));

describe.each(storeEngines())("an object's timeline on %s", (_name, engine) => {
  const writes = generated();
  let store: WriteStore;
  beforeAll(async () => {
    store = await stored(engine, writes);
  }, 120_000);

  it("counts every write of the range into its pixel column, by class, with no cap", async () => {
    const timeline = await store.timeline(KEY, START, END, COLUMNS);
    expect(timeline.total).toBe(writes.length);
    const expected = new Map<number, Record<string, number>>();
    for (const w of writes) {
      const c = (expected.get(column(w.tsMs)) ?? {}) as Record<string, number>;
      c[w.cls] = (c[w.cls] ?? 0) + 1;
      expected.set(column(w.tsMs), c);
    }
    expect(timeline.ticks.map((t) => [t.i, t.byClass])).toEqual([...expected.entries()].sort((a, b) => a[0] - b[0]));
    expect(timeline.ticks.every((t) => t.n === Object.values(t.byClass).reduce((a, b) => a + (b ?? 0), 0))).toBe(true);
    // The last write of the range is in the last columns: the whole range is drawn, not its first part.
    expect(timeline.ticks.at(-1)!.i).toBe(column(writes.at(-1)!.tsMs));
  });

  it("lays the most-changed fields in lanes with their changes per column", async () => {
    const timeline = await store.timeline(KEY, START, END, COLUMNS);
    const counts = new Map<string, number>();
    for (const w of writes) for (const c of w.changes) counts.set(c.path, (counts.get(c.path) ?? 0) + 1);
    const top = [...counts.entries()].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).slice(0, 6);
    expect(timeline.lanes.map((l) => [l.path, l.changes])).toEqual(top);
    const message = timeline.lanes.find((l) => l.path === "status.message")!;
    expect(message.ticks.reduce((n, [, k]) => n + k, 0)).toBe(counts.get("status.message"));
  });

  it("draws the projection as segments that end where it changed, several changes in one column as one", async () => {
    const timeline = await store.timeline(KEY, START, END, COLUMNS);
    expect(timeline.segments[0]).toMatchObject({ fromMs: START, projection: { online: "false" }, changes: 0 });
    const flips = writes.filter((w) => w.cls === "routed");
    expect(timeline.segments.reduce((n, s) => n + s.changes, 0)).toBe(flips.length);
    expect(timeline.segments.length).toBeLessThanOrEqual(COLUMNS + 1);
    for (let i = 1; i < timeline.segments.length; i++) expect(timeline.segments[i].fromMs).toBe(timeline.segments[i - 1].toMs);
    expect(timeline.segments.at(-1)!.projection).toEqual(writes.at(-1)!.projection);
    expect(timeline.segments.at(-1)!.toMs).toBe(END);
  });

  it("answers a picked write whole, by seq or nearest time, with its place and its neighbours", async () => {
    const all = await store.writesOf(KEY, START, END, 20_000);
    expect(all).toHaveLength(writes.length);
    const k = 4_321;
    const picked = (await store.pickWrite(KEY, START, END, { seq: all[k].seq }))!;
    expect(picked.write).toMatchObject({ seq: all[k].seq, tsMs: all[k].tsMs, class: all[k].cls, changes: all[k].changes });
    expect([picked.index, picked.total, picked.previousSeq, picked.nextSeq]).toEqual([k + 1, writes.length, all[k - 1].seq, all[k + 1].seq]);
    const near = (await store.pickWrite(KEY, START, END, { nearMs: all[k].tsMs + 1 }))!;
    const distance = (w: { tsMs: number }) => Math.abs(w.tsMs - (all[k].tsMs + 1));
    expect(distance(near.write)).toBe(Math.min(...all.map(distance)));
    const first = (await store.pickWrite(KEY, START, END, { seq: all[0].seq }))!;
    expect([first.index, first.previousSeq]).toEqual([1, null]);
    expect((await store.pickWrite(KEY, START, END, { seq: all.at(-1)!.seq }))!.nextSeq).toBeNull();
    // The create before the range is not one of the range's writes.
    expect((await store.pickWrite(KEY, START, END, { nearMs: START - 10 }))!.write.seq).toBe(all[0].seq);
    expect(await store.pickWrite(KEY, START + 1, START + 2, { nearMs: START })).toBeUndefined();
  });

  it("merges many projection changes inside one column into one segment with the last value", async () => {
    const changes = [1, 2, 3].map((i) => ({ tsMs: 10 + i, projection: JSON.stringify({ online: String(i % 2 === 1) }) }));
    const timeline = buildTimeline({ counts: [], lanes: [], changes, initial: JSON.stringify({ online: "false" }) }, { startMs: 0, endMs: 1000 }, 10);
    expect(timeline.segments).toEqual([
      { fromMs: 0, toMs: 11, projection: { online: "false" }, changes: 0 },
      { fromMs: 11, toMs: 1000, projection: { online: "true" }, changes: 3 },
    ]);
  });
});
