/**
 * The Objects ranking over a large store: WRITES (default 10,000,000) writes of 20,000 objects
 * spread over 14 days (a store at the default retention), each with one changed field. Times
 * WriteStore.objects() (the ranking with class counts, top fields, writers and sparklines, one
 * page of 50) for the last 24 hours, all 14 days and 14 unaligned days, before and after the
 * background has rolled the days up as the dashboard does, in its own thread (timed too, with the
 * rankings this thread answered meanwhile).
 * Target ≤ 0.5 s. Peer: the bare `GROUP BY object ORDER BY count` over the same rows, the least
 * any ranking must do.
 * Run: npx tsx test/bench/objects-ranking.ts   (building the store takes a few minutes)
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import Database from "better-sqlite3";
import { buildSync } from "esbuild";
import { createRng } from "@/lib/scenario/rng";
import { WriteStore } from "@/lib/store/store";
import { ROOT } from "../helpers/root";
import { percentile, report, round } from "./report";

const WRITES = Number(process.env.WRITES ?? 10_000_000);
const OBJECTS = 20_000;
const DAY = 86_400_000;
const END_MS = Date.parse("2026-09-13T00:00:00Z");
const START_MS = END_MS - 14 * DAY;

async function main() {
  // STORE=<path of a store an earlier run built> skips building one (which takes minutes).
  const reuse = process.env.STORE;
  const path = reuse ?? join(mkdtempSync(join(tmpdir(), "churnscope-bench-objects-")), "store.sqlite");
  await (await WriteStore.open(path)).close(); // the real schema and indexes
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const buildStart = performance.now();
  if (!reuse) build(db);
  const buildSeconds = (performance.now() - buildStart) / 1000;
  console.error(`objects-ranking: store at ${path}`);
  await measure(db, path, buildSeconds);
}

/** The dashboard's roll-up thread, bundled here because worker threads do not inherit tsx's loader. */
function rollThread(path: string): Worker {
  const code = buildSync({
    entryPoints: [join(ROOT, "lib", "store", "roll-worker.ts")],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["better-sqlite3"],
    write: false,
    logLevel: "silent",
  }).outputFiles[0].text;
  return new Worker(code, { eval: true, workerData: { path } });
}

function build(db: Database.Database) {
  const rng = createRng(7);
  db.transaction(() => {
    const object = db.prepare("INSERT INTO objects (cluster, grp, kind, namespace, name) VALUES (?, ?, ?, ?, ?)");
    for (let i = 0; i < OBJECTS; i++) object.run(i % 3 ? "milo" : "hub", "networking.datumapis.com", i % 5 ? "Connector" : "Lease", `ns-${i % 40}`, `obj-${i}`);
  })();
  const write = db.prepare(
    "INSERT INTO writes (object_id, ts_ms, rv, class, writer, source, heartbeat, changes, projection) VALUES (?, ?, NULL, ?, ?, 'watch', ?, ?, '{}')",
  );
  const field = db.prepare("INSERT INTO field_changes (write_id, object_id, ts_ms, path, writer) VALUES (?, ?, ?, ?, ?)");
  const classes = ["unrouted", "unrouted", "unrouted", "routed", "no-op"];
  const paths = ["status.conditions[type=Ready].message", "status.publicKey.addresses", "spec.renewTime", "metadata.annotations"];
  const writers = ["network-services-operator", "datum-connect-agent", "kube-controller-manager"];
  const CHUNK = 200_000;
  // Stored in time order, as the recorder appends them.
  const times = Float64Array.from({ length: WRITES }, () => START_MS + Math.floor(rng() * 14 * DAY)).sort();
  for (let done = 0; done < WRITES; done += CHUNK) {
    db.transaction(() => {
      for (let i = done; i < Math.min(WRITES, done + CHUNK); i++) {
        // A skewed popularity: a few objects take most writes, as in the incident.
        const objectId = 1 + Math.floor(OBJECTS * rng() ** 3);
        const ts = times[i];
        const path = paths[Math.floor(rng() * paths.length)];
        const writer = writers[Math.floor(rng() * writers.length)];
        const id = Number(
          write.run(objectId, ts, classes[Math.floor(rng() * classes.length)], writer, path === "spec.renewTime" ? 1 : 0, "[]").lastInsertRowid,
        );
        field.run(id, objectId, ts, path, writer);
      }
    })();
  }
  db.exec("ANALYZE");
}

async function measure(db: Database.Database, path: string, buildSeconds: number) {
  // Every run starts without rollups: first as a store is before the background rolls its days up, then after.
  for (const table of ["rank_days", "rank_days_done", "rank_days_progress", "rank_days_fields", "rank_days_writers", "rank_hours"])
    db.exec(`DELETE FROM ${table}`);
  const store = await WriteStore.open(path);
  const peer = db.prepare("SELECT object_id, COUNT(*) AS n FROM writes WHERE ts_ms > ? AND ts_ms <= ? GROUP BY object_id ORDER BY n DESC LIMIT 50");
  // The unaligned range reads its partial days at both edges from the writes, as "now-14d" does.
  const UNALIGNED_END = END_MS - 6.6 * 3_600_000;
  const ranges = [
    ["last 24 h", END_MS - DAY, END_MS],
    ["all 14 days", START_MS, END_MS],
    ["14 days to 17:24, unaligned", UNALIGNED_END - 14 * DAY + 1, UNALIGNED_END],
  ] as const;
  for (const rollups of ["none", "every whole day"]) {
    let catchUp: { seconds: number; rankingsMeanwhile: number; rankingMeanwhileP50Ms: number; rankingMeanwhileMaxMs: number } | undefined;
    if (rollups !== "none") {
      // As the dashboard does it: in a thread of its own (lib/store/roll-worker.ts), a quarter hour at
      // a time with pauses between, until every day is in; meanwhile this thread answers rankings of
      // the last 24 h, as the dashboard answers requests.
      const days = db.prepare("SELECT CAST(MAX(ts_ms) / 86400000 AS INTEGER) - CAST(MIN(ts_ms) / 86400000 AS INTEGER) + 1 AS n FROM writes").get() as {
        n: number;
      };
      const daysDone = () => (db.prepare("SELECT COUNT(*) AS n FROM rank_days_done").get() as { n: number }).n;
      const thread = rollThread(path);
      const errors: string[] = [];
      thread.on("message", (message: { error?: string }) => errors.push(message.error ?? "?"));
      thread.on("error", (error) => errors.push(error.message));
      const t = performance.now();
      const meanwhile: number[] = [];
      while (daysDone() < days.n && errors.length === 0) {
        const r = performance.now();
        await store.objects({ fromMs: END_MS - DAY, toMs: END_MS }, 50, 0);
        meanwhile.push(performance.now() - r);
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      const seconds = (performance.now() - t) / 1000;
      await thread.terminate();
      if (errors.length) throw new Error(errors[0]);
      catchUp = {
        seconds: round(seconds, 1),
        rankingsMeanwhile: meanwhile.length,
        rankingMeanwhileP50Ms: round(percentile(meanwhile, 50)),
        rankingMeanwhileMaxMs: round(Math.max(...meanwhile)),
      };
      console.error(
        `objects-ranking: ${days.n} days rolled up in the roll-up thread in ${catchUp.seconds} s; rankings of the last 24 h meanwhile: p50 ${catchUp.rankingMeanwhileP50Ms} ms, at most ${catchUp.rankingMeanwhileMaxMs} ms`,
      );
    }
    for (const [label, fromMs, toMs] of ranges) {
      const times: number[] = [];
      const peerTimes: number[] = [];
      let rows = 0;
      let inRange = 0;
      for (let i = 0; i < 5; i++) {
        let t = performance.now();
        const result = await store.objects({ fromMs, toMs }, 50, 0);
        times.push(performance.now() - t);
        rows = result.rows.length;
        inRange = result.rows.length ? result.total : 0;
        t = performance.now();
        peer.all(fromMs, toMs);
        peerTimes.push(performance.now() - t);
      }
      const writesInRange = (db.prepare("SELECT COUNT(*) AS n FROM writes WHERE ts_ms > ? AND ts_ms <= ?").get(fromMs, toMs) as { n: number }).n;
      report({
        bench: "objects-ranking",
        range: label,
        rollups,
        ...(catchUp === undefined ? {} : { backgroundRollup: catchUp }),
        storedWrites: WRITES,
        writesInRange,
        objectsInRange: inRange,
        pageRows: rows,
        p50Ms: round(percentile(times, 50)),
        peer: "bare GROUP BY object_id ORDER BY count LIMIT 50",
        peerP50Ms: round(percentile(peerTimes, 50)),
        buildSeconds: round(buildSeconds, 1),
        target: "≤ 500 ms",
      });
    }
  }
  await store.close();
  db.close();
}

void main();
