/**
 * What real controllers get wrong, over a large store: the condition-clock and echo report (/api/objects/traits: the
 * store's counts and their summary) and the flaps with the hold-down what-if (/api/objects/flaps), over 10 M writes of
 * 20,000 objects in 14 days (test/bench/ranking-store.ts: a fifth of the writes routed, flipping online; echoes,
 * clock-only writes, frozen and restamped clocks on a third of them), for the last 24 hours and all 14 days, before and
 * after the roll-ups. Peer: a bare scan of the same rows (the traited writes grouped as the report groups them; the
 * routed writes in object order as the flap reading takes them), the least any such answer must read.
 * Target: within the Objects page's budget (≤ 500 ms) once rolled up. Stores nothing per write but the traits column.
 * Run: npx tsx test/bench/writer-faults.ts   (WRITES=10000000 ENGINES=sqlite by default; about 15 minutes)
 */
import { mkdtempSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { flapsOf, holdDown } from "@/lib/analysis/flaps";
import { summariseTraits } from "@/lib/analysis/write-traits";
import type { StoreTarget } from "@/lib/store/database";
import { WriteStore } from "@/lib/store/store";
import { TRAITED } from "@/lib/store/traits";
import { startPostgres, type TestPostgres } from "../helpers/postgres";
import { postgresSettings } from "../helpers/store-at";
import { percentile, report, round } from "./report";
import { buildPostgres, buildSqlite, DAY_MS as DAY, END_MS, START_MS } from "./ranking-store";

const WRITES = Number(process.env.WRITES ?? 10_000_000);
const ENGINES = (process.env.ENGINES ?? "sqlite").split(",");
const RUNS = 5;

async function main() {
  const server: TestPostgres | undefined = ENGINES.includes("postgres")
    ? await startPostgres({ settings: { shared_buffers: "2GB", max_wal_size: "8GB", checkpoint_timeout: "30min" } })
    : undefined;
  try {
    for (const engine of ENGINES) {
      const t = performance.now();
      if (engine === "sqlite") {
        const dir = mkdtempSync(join(tmpdir(), "churnscope-bench-faults-"));
        const path = join(dir, "store.sqlite");
        await (await WriteStore.open(path)).close();
        buildSqlite(path, WRITES);
        await measure(engine, { engine: "sqlite", path }, (performance.now() - t) / 1000, statSync(path).size);
        rmSync(dir, { recursive: true, force: true });
      } else if (engine === "postgres" && server) {
        const name = "bench_faults";
        const url = await server.database(name);
        const settings = postgresSettings(url, { poolSize: 10, statementTimeoutMs: 120_000 });
        await (await WriteStore.open({ engine: "postgres", settings })).close();
        await buildPostgres(url, WRITES);
        const bytes = Number((await server.sql("SELECT pg_database_size($1) AS b", [name])).rows[0].b);
        await measure(engine, { engine: "postgres", settings }, (performance.now() - t) / 1000, bytes);
        await server.sql(`DROP DATABASE ${name}`);
      } else throw new Error(`ENGINES: ${engine} is not sqlite or postgres`);
    }
  } finally {
    await server?.stop();
  }
}

async function timed<T>(run: () => Promise<T>): Promise<{ ms: number[]; last: T }> {
  const ms: number[] = [];
  let last!: T;
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    last = await run();
    ms.push(performance.now() - t);
  }
  return { ms, last };
}

async function measure(engine: string, target: StoreTarget, buildSeconds: number, storeBytes: number) {
  const store = await WriteStore.open(target);
  const sql = store.database.sql();
  console.error(`writer-faults: ${engine}, ${WRITES} writes built in ${round(buildSeconds, 1)} s, ${storeBytes} bytes`);
  const ranges = [
    ["last 24 h", END_MS - DAY, END_MS],
    ["all 14 days", START_MS, END_MS],
  ] as const;
  for (const rollups of ["none", "every whole day"]) {
    if (rollups !== "none") {
      const t = performance.now();
      await store.rollPending(END_MS + DAY);
      console.error(`writer-faults: ${engine}: rolled up in ${round((performance.now() - t) / 1000, 1)} s`);
    }
    for (const [label, fromMs, toMs] of ranges) {
      const range = { startMs: fromMs, endMs: toMs };
      const traits = await timed(async () => summariseTraits((await store.traitCounts({ fromMs, toMs })).counts, range));
      const traitPeer = await timed(() =>
        sql.all(
          `SELECT object_id, writer, class, traits, COUNT(*) AS n FROM writes WHERE ts_ms > ? AND ts_ms <= ? AND ${TRAITED} GROUP BY object_id, writer, class, traits`,
          [fromMs, toMs],
        ),
      );
      const flaps = await timed(async () => {
        const { runs } = await store.changeRuns({ fromMs, toMs }, 60_000);
        return { flaps: flapsOf(runs, 60_000, range), hold: holdDown(runs, { field: "online", value: "false", holdMs: 30_000 }, toMs) };
      });
      const flapPeer = await timed(() =>
        sql.all("SELECT object_id, ts_ms, projection FROM writes WHERE class = 'routed' AND ts_ms > ? AND ts_ms <= ? ORDER BY object_id, ts_ms", [
          fromMs,
          toMs,
        ]),
      );
      report({
        bench: "writer-faults",
        engine,
        range: label,
        rollups,
        storedWrites: WRITES,
        traits: { p50Ms: round(percentile(traits.ms, 50)), maxMs: round(Math.max(...traits.ms)), clockRows: traits.last.clocks.length },
        traitsPeer: { what: "bare GROUP BY of the traited writes", p50Ms: round(percentile(traitPeer.ms, 50)), groups: traitPeer.last.length },
        flaps: {
          p50Ms: round(percentile(flaps.ms, 50)),
          maxMs: round(Math.max(...flaps.ms)),
          changes: flaps.last.flaps.changes,
          flaps: flaps.last.flaps.flaps,
          rebuildsWith: flaps.last.hold.rebuildsWith,
        },
        flapsPeer: { what: "bare read of the routed writes in object order", p50Ms: round(percentile(flapPeer.ms, 50)), rows: flapPeer.last.length },
        buildSeconds: round(buildSeconds, 1),
        storeBytes,
        target: "≤ 500 ms (the Objects page's budget) once rolled up",
      });
    }
  }
  await store.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
