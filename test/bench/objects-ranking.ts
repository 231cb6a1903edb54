/**
 * The Objects ranking over a large store, on both engines in one run: for each size in WRITES (default 10 M and
 * 30 M) and each engine in ENGINES (default sqlite,postgres), a fresh store of that many writes of 20,000 objects
 * over 14 days (a store at the default retention; test/bench/ranking-store.ts builds it, the same rows on both).
 * Times WriteStore.objects() (the ranking with class counts, top fields, writers and sparklines, one page of 50)
 * for the last 24 hours, all 14 days and 14 unaligned days, before and after the dashboard's roll-up thread has
 * rolled the days up (timed too, with the rankings answered meanwhile). Each store is removed after it is measured.
 * PostgreSQL is Debian's, on the same 2 cores and disk, with 2 GB of shared buffers.
 * Target ≤ 0.25 s at 10 M once rolled up, and ≤ 1.5× that at 30 M. Peer: the bare
 * `GROUP BY object ORDER BY count` over the same rows, the least any ranking must do.
 * Run: npx tsx test/bench/objects-ranking.ts   (about an hour for both sizes on both engines)
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { buildSync } from "esbuild";
import type { StoreTarget } from "@/lib/store/database";
import type { SqlValue } from "@/lib/store/engine/types";
import { WriteStore } from "@/lib/store/store";
import { startPostgres, type TestPostgres } from "../helpers/postgres";
import { postgresSettings } from "../helpers/store-at";
import { ROOT } from "../helpers/root";
import { percentile, report, round } from "./report";
import { buildPostgres, buildSqlite, DAY_MS as DAY, END_MS, START_MS } from "./ranking-store";

const SIZES = (process.env.WRITES ?? "10000000,30000000").split(",").map(Number);
const ENGINES = (process.env.ENGINES ?? "sqlite,postgres").split(",");

interface Measured {
  engine: string;
  target: StoreTarget;
  storedWrites: number;
  buildSeconds: number;
  /** the store's bytes on disk once built */
  bytes: () => Promise<number>;
}

async function main() {
  const server: TestPostgres | undefined = ENGINES.includes("postgres")
    ? await startPostgres({ settings: { shared_buffers: "2GB", max_wal_size: "8GB", checkpoint_timeout: "30min" } })
    : undefined;
  try {
    for (const writes of SIZES)
      for (const engine of ENGINES) {
        const buildStart = performance.now();
        if (engine === "sqlite") {
          const dir = mkdtempSync(join(tmpdir(), "churnscope-bench-objects-"));
          const path = join(dir, "store.sqlite");
          await (await WriteStore.open(path)).close(); // the real schema and indexes
          buildSqlite(path, writes);
          const buildSeconds = (performance.now() - buildStart) / 1000;
          await measure({ engine, target: { engine: "sqlite", path }, storedWrites: writes, buildSeconds, bytes: async () => statSync(path).size });
          rmSync(dir, { recursive: true, force: true });
        } else if (engine === "postgres" && server) {
          const name = `bench_objects_${writes}`;
          const url = await server.database(name);
          const settings = postgresSettings(url, { poolSize: 10, statementTimeoutMs: 60_000 });
          await (await WriteStore.open({ engine: "postgres", settings })).close();
          await buildPostgres(url, writes);
          const buildSeconds = (performance.now() - buildStart) / 1000;
          const bytes = async () => Number((await server.sql("SELECT pg_database_size($1) AS b", [name])).rows[0].b);
          await measure({ engine, target: { engine: "postgres", settings }, storedWrites: writes, buildSeconds, bytes });
          await server.sql(`DROP DATABASE ${name}`);
        } else throw new Error(`ENGINES: ${engine} is not sqlite or postgres`);
      }
  } finally {
    await server?.stop();
  }
}

/** The dashboard's roll-up thread, bundled here because worker threads do not inherit tsx's loader. */
function rollThread(target: StoreTarget): Worker {
  const code = buildSync({
    entryPoints: [join(ROOT, "lib", "store", "roll-worker.ts")],
    bundle: true,
    platform: "node",
    format: "cjs",
    target: "node20",
    external: ["better-sqlite3", "pg", "pg-native"],
    write: false,
    logLevel: "silent",
  }).outputFiles[0].text;
  return new Worker(code, { eval: true, workerData: { target } });
}

async function measure(run: Measured) {
  const store = await WriteStore.open(run.target);
  const sql = store.database.sql();
  const count = async (text: string, params: SqlValue[] = []) => Number((await sql.get<{ n: number }>(text, params))!.n);
  const storeBytes = await run.bytes();
  console.error(`objects-ranking: ${run.engine}, ${run.storedWrites} writes built in ${round(run.buildSeconds, 1)} s, ${storeBytes} bytes`);
  // The unaligned range reads its partial days at both edges from the writes, as "now-14d" does.
  const UNALIGNED_END = END_MS - 6.6 * 3_600_000;
  const ranges = [
    ["last 24 h", END_MS - DAY, END_MS],
    ["all 14 days", START_MS, END_MS],
    ["14 days to 17:24, unaligned", UNALIGNED_END - 14 * DAY + 1, UNALIGNED_END],
  ] as const;
  // First as a store is before the background rolls its days up, then after.
  for (const rollups of ["none", "every whole day"]) {
    let catchUp: { seconds: number; rankingsMeanwhile: number; rankingMeanwhileP50Ms: number; rankingMeanwhileMaxMs: number } | undefined;
    if (rollups !== "none") {
      // As the dashboard does it: in a thread of its own (lib/store/roll-worker.ts), a quarter hour at
      // a time with pauses between, until every day is in; meanwhile this thread answers rankings of
      // the last 24 h, as the dashboard answers requests.
      const days = (END_MS - START_MS) / DAY;
      const thread = rollThread(run.target);
      const errors: string[] = [];
      thread.on("message", (message: { error?: string }) => errors.push(message.error ?? "?"));
      thread.on("error", (error) => errors.push(error.message));
      const t = performance.now();
      const meanwhile: number[] = [];
      while ((await count("SELECT COUNT(*) AS n FROM rank_days_done")) < days && errors.length === 0) {
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
        `objects-ranking: ${run.engine}: ${days} days rolled up in the roll-up thread in ${catchUp.seconds} s; rankings of the last 24 h meanwhile: p50 ${catchUp.rankingMeanwhileP50Ms} ms, at most ${catchUp.rankingMeanwhileMaxMs} ms`,
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
        await sql.all("SELECT object_id, COUNT(*) AS n FROM writes WHERE ts_ms > ? AND ts_ms <= ? GROUP BY object_id ORDER BY n DESC LIMIT 50", [fromMs, toMs]);
        peerTimes.push(performance.now() - t);
      }
      report({
        bench: "objects-ranking",
        engine: run.engine,
        range: label,
        rollups,
        ...(catchUp === undefined ? {} : { backgroundRollup: catchUp }),
        storedWrites: run.storedWrites,
        writesInRange: await count("SELECT COUNT(*) AS n FROM writes WHERE ts_ms > ? AND ts_ms <= ?", [fromMs, toMs]),
        objectsInRange: inRange,
        pageRows: rows,
        p50Ms: round(percentile(times, 50)),
        peer: "bare GROUP BY object_id ORDER BY count LIMIT 50",
        peerP50Ms: round(percentile(peerTimes, 50)),
        buildSeconds: round(run.buildSeconds, 1),
        storeBytes,
        target: "≤ 250 ms at 10 M once rolled up, ≤ 1.5× that at 30 M",
      });
    }
  }
  await store.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
