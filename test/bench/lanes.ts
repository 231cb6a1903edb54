/**
 * The lanes view over a large store: 20,000 objects and WRITES (default 2,000,000) writes over 14 days, a few objects
 * taking most of them, every tenth write a routed one that moves the object's projection, and a quarter of the objects
 * quiet in the range (listed before it, not written in it). Times what /api/objects/lanes asks of the store for one
 * page of 100 lanes at a laptop's 1,100 columns (the ranking, the quiet objects after it, the lanes, the kind list),
 * for the last 24 hours and for all 14 days, on the first page and on the page where the quiet objects begin.
 * Target ≤ 300 ms p50. Peer: the Objects ranking's own page of 100 for the same range, the same store, the same run.
 * Run: npx tsx test/bench/lanes.ts
 */

import { join } from "node:path";
import Database from "better-sqlite3";
import { createRng } from "@/lib/scenario/rng";
import { WriteStore } from "@/lib/store/store";
import { percentile, report, round } from "./report";
import { scratchDir } from "./scratch";

const WRITES = Number(process.env.WRITES ?? 2_000_000);
const OBJECTS = 20_000;
const DAY = 86_400_000;
const END_MS = Date.parse("2026-09-13T00:00:00Z");
const START_MS = END_MS - 14 * DAY;
const PAGE = 100;
const COLUMNS = 1100;
const RUNS = 9;

async function build(path: string) {
  await (await WriteStore.open(path)).close(); // the real schema and indexes
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const rng = createRng(17);
  db.transaction(() => {
    const object = db.prepare("INSERT INTO objects (cluster, grp, kind, namespace, name) VALUES (?, ?, ?, ?, ?)");
    const seen = db.prepare("INSERT INTO first_seen (object_id, ts_ms, projection) VALUES (?, ?, ?)");
    for (let i = 0; i < OBJECTS; i++) {
      object.run("milo", "networking.datumapis.com", i % 5 ? "Connector" : "HTTPRoute", `ns-${i % 40}`, `obj-${i}`);
      seen.run(i + 1, START_MS - DAY, JSON.stringify({ online: "true" }));
    }
  })();
  const write = db.prepare(
    "INSERT INTO writes (object_id, ts_ms, rv, class, writer, source, heartbeat, changes, projection) VALUES (?, ?, NULL, ?, 'network-services-operator', 'watch', 0, '[]', ?)",
  );
  const online = new Map<number, boolean>();
  const times = Float64Array.from({ length: WRITES }, () => START_MS + Math.floor(rng() * 14 * DAY)).sort();
  const CHUNK = 200_000;
  for (let done = 0; done < WRITES; done += CHUNK) {
    db.transaction(() => {
      for (let i = done; i < Math.min(WRITES, done + CHUNK); i++) {
        // Three quarters of the objects take the writes, a few of them most; the rest stay quiet.
        const objectId = 1 + Math.floor(OBJECTS * 0.75 * rng() ** 3);
        const routed = rng() < 0.1;
        if (routed) online.set(objectId, !(online.get(objectId) ?? true));
        write.run(objectId, times[i], routed ? "routed" : "unrouted", JSON.stringify({ online: String(online.get(objectId) ?? true) }));
      }
    })();
  }
  db.exec("ANALYZE");
  db.close();
}

async function main() {
  const path = process.env.STORE ?? join(scratchDir("lanes"), "store.sqlite");
  const buildStart = performance.now();
  if (!process.env.STORE) await build(path);
  const buildSeconds = (performance.now() - buildStart) / 1000;
  console.error(`lanes: store at ${path} (STORE=${path} reuses it)`);
  const store = await WriteStore.open(path);
  await store.rollPending(END_MS + DAY);
  const ranges = [
    ["last 24 h", END_MS - DAY, END_MS],
    ["all 14 days", START_MS, END_MS],
  ] as const;
  for (const [label, fromMs, toMs] of ranges) {
    const filter = { fromMs, toMs };
    const written = (await store.objects(filter, 1, 0)).total;
    // The first page, and the page on which the written objects end and the quiet ones begin.
    for (const page of [1, Math.floor(written / PAGE) + 1]) {
      const offset = (page - 1) * PAGE;
      const lanes: number[] = [];
      const ranking: number[] = [];
      let shown = 0;
      let quietTotal = 0;
      for (let i = 0; i < RUNS; i++) {
        let t = performance.now();
        // What listLanes (lib/server/handlers/objects.ts) asks of the store.
        const ranked = await store.objects(filter, PAGE, offset);
        const quiet = await store.quietObjects(filter, PAGE - ranked.rows.length, Math.max(0, offset - ranked.total));
        const keys = [...ranked.rows, ...quiet.keys];
        await store.lanes(keys, fromMs, toMs, COLUMNS);
        await store.kinds();
        lanes.push(performance.now() - t);
        shown = keys.length;
        quietTotal = quiet.total;
        t = performance.now();
        await store.objects(filter, PAGE, offset);
        ranking.push(performance.now() - t);
      }
      report({
        bench: "lanes",
        range: label,
        page,
        lanes: shown,
        objects: OBJECTS,
        writtenInRange: written,
        quietInRange: quietTotal,
        storedWrites: WRITES,
        columns: COLUMNS,
        p50Ms: round(percentile(lanes, 50)),
        p95Ms: round(percentile(lanes, 95)),
        peer: `the Objects ranking's page of ${PAGE}`,
        peerP50Ms: round(percentile(ranking, 50)),
        buildSeconds: round(buildSeconds, 1),
        target: "≤ 300 ms p50",
      });
    }
  }
  await store.close();
}

void main();
