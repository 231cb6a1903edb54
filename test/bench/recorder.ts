/**
 * Recorder throughput: watch events diffed, classified, attributed and stored per second by the
 * recorder's core into a real SQLite store, replaying the replay's 104k object versions (Connectors
 * in both clusters, Leases, HTTPProxies) as ADDED/MODIFIED/DELETED events.
 * Events go in as the watchers hand them over: each resource's stream in bursts (BURST, default 100)
 * of one transaction each; BURST=1 is a quiet cluster, an event per transaction. A watcher hands each burst as it
 * arrives, compared while the ones before it are stored: as many at a time as IN_FLIGHT (by default as many as a watcher
 * lets wait; 1: each burst stored before the next is handed, as before the recorder compared ahead).
 * Peers: the same events stored as raw JSON rows, one transaction per event, no diff; and the ceiling, the rows the
 * recorder stored inserted bare into a fresh store of the same schema, BURST writes per transaction.
 * ENGINES=sqlite,postgres (the default: sqlite) also stores the same events, in the same run, into a fresh database of a
 * real PostgreSQL server (Debian's, started here on the same machine), and reports each engine's events/s, and
 * PostgreSQL's ceiling: the rows the recorder stored inserted bare into a fresh database, a burst per transaction.
 * AUDITED=1 stores one audit request first (of an object the events do not touch), as a store the audit webhook feeds
 * has: every watched write may then be one the audit log stored already, and the recorder asks which.
 * ROUNDS (default 1) records that many times into fresh stores, the engines alternated: this machine's speed drifts by a
 * fifth over a minute, so only a round's two runs compare; the figures are the medians, with their ranges.
 * Run: npx tsx test/bench/recorder.ts
 */

import { join } from "node:path";
import Database from "better-sqlite3";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { DEFAULT_REPLAY } from "@/lib/demo/params";
import { generateReplay } from "@/lib/demo/replay";
import { ProfileRecorder, type KubeObject } from "@/lib/recorder/core";
import { MAX_QUEUED_EVENTS } from "@/lib/recorder/watcher";
import { insertRows } from "@/lib/store/engine/insert-rows";
import type { SqlValue } from "@/lib/store/engine/types";
import { WriteStore } from "@/lib/store/store";
import { startPostgres, type TestPostgres } from "../helpers/postgres";
import { postgresSettings } from "../helpers/store-at";
import { percentile, report, round } from "./report";
import { scratchDir } from "./scratch";

const BURST = Number(process.env.BURST ?? 100);

const ENGINES = (process.env.ENGINES ?? "sqlite").split(",");

const ROUNDS = Math.max(1, Number(process.env.ROUNDS ?? 1));

const AUDITED = process.env.AUDITED === "1";

/**
 * Bursts handed to the recorder before the oldest of them is stored (1: each stored before the next is handed). By default
 * as many as a watcher lets wait: it hands each burst as it arrives, and ends its watch past MAX_QUEUED_EVENTS waiting.
 */
const IN_FLIGHT = Math.max(1, Number(process.env.IN_FLIGHT ?? Math.ceil(MAX_QUEUED_EVENTS / BURST)));

/** One completed audit request of an object no event touches, at `tsMs`. */
async function auditOne(store: WriteStore, tsMs: number): Promise<void> {
  const request = { key: "bench/ResponseComplete", tsMs, user: "bench", userAgent: "bench", verb: "update", group: "", resource: "configmaps" };
  await store.batch(
    () => store.audit().addRequest("bench", { ...request, subresource: "", namespace: "bench", name: "untouched", code: 200, latencyMs: 1 }, null),
    [tsMs],
  );
}

const median = (values: readonly number[]) => percentile([...values], 50);

/** Stores the streams' events into `store` as the watchers would, a burst per transaction; answers the seconds it took. */
async function record(store: WriteStore, streams: Map<string, Prepared[]>): Promise<{ seconds: number; stored: number; transactions: number }> {
  if (AUDITED) await auditOne(store, [...streams.values()][0][0].timeMs);
  const recorders = new Map<string, ProfileRecorder>();
  const recorderOf = (cluster: string, group: string, kind: string) => {
    const key = `${cluster}/${group}/${kind}`;
    let recorder = recorders.get(key);
    if (!recorder) {
      const profiles = DEFAULT_PROFILES.filter((p) => p.group === group && p.kind === kind);
      recorder = new ProfileRecorder(
        store,
        cluster,
        profiles.length ? profiles : [{ ...DEFAULT_PROFILES[0], name: key, group, kind, resource: kind.toLowerCase() }],
      );
      recorders.set(key, recorder);
    }
    return recorder;
  };
  let transactions = 0;
  const start = performance.now();
  let stored = 0;
  const cursors = [...streams.values()].map((events) => ({ events, at: 0 }));
  // Round-robin over the streams, a burst at a time, as their watchers' bursts would interleave. (Run side by side
  // instead, each stream awaiting only its own bursts, both engines were slower: SQLite 23.9 k against 26.7 k events/s,
  // PostgreSQL 11.0 k against 14.9 k.) A burst is handed while the ones before it are stored, as a watcher hands what
  // arrived meanwhile, IN_FLIGHT at most.
  const inFlight: Promise<number>[] = [];
  while (cursors.some((c) => c.at < c.events.length)) {
    for (const cursor of cursors) {
      const burst = cursor.events.slice(cursor.at, cursor.at + BURST);
      if (burst.length === 0) continue;
      cursor.at += burst.length;
      const { ref } = burst[0];
      if (inFlight.length >= IN_FLIGHT) stored += await inFlight.shift()!;
      inFlight.push(recorderOf(ref.cluster, ref.group, ref.kind).applyEvents(burst.map((e) => ({ type: e.type, obj: e.obj, tsMs: e.timeMs }))));
      transactions++;
    }
  }
  for (const applied of inFlight) stored += await applied;
  return { seconds: (performance.now() - start) / 1000, stored, transactions };
}

type Prepared = { ref: { cluster: string; group: string; kind: string }; type: string; obj: KubeObject; timeMs: number };

async function main() {
  const replay = generateReplay(DEFAULT_REPLAY);
  const dir = scratchDir("recorder");
  const alive = new Set<number>();
  const events = replay.sink.writes
    .map((w) => {
      const ref = replay.sink.objects[w.objectIndex];
      const last = w.object ?? replay.sink.writes.findLast?.((x) => x.objectIndex === w.objectIndex && x.object && x.timeMs < w.timeMs)?.object ?? null;
      const type = w.object === null ? "DELETED" : alive.has(w.objectIndex) ? "MODIFIED" : "ADDED";
      if (w.object === null) alive.delete(w.objectIndex);
      else alive.add(w.objectIndex);
      return { ref, type, obj: (w.object ?? last) as KubeObject | null, timeMs: w.timeMs };
    })
    .filter((e) => e.obj !== null);
  // A deleted object's event carries its last version with a fresh resourceVersion, as the API server sends it.
  let rv = 1_000_000;
  const prepared = events.map((e) => ({
    ...e,
    obj: { ...(e.obj as KubeObject), metadata: { ...(e.obj as KubeObject).metadata, resourceVersion: String(rv++) } } as KubeObject,
  }));

  // As the watchers hand them over: each resource has its own watch stream, whose events that arrive
  // together (here BURST of them) go in one transaction. Streams of other resources interleave in time
  // but not within a stream, so the events are split by resource first, in order.
  const streams = new Map<string, Prepared[]>();
  for (const e of prepared) {
    const key = `${e.ref.cluster}/${e.ref.group}/${e.ref.kind}`;
    const stream = streams.get(key) ?? [];
    stream.push(e);
    streams.set(key, stream);
  }
  // The engines take turns, a round each at a time, into fresh stores; the first round's SQLite store gives the ceiling.
  const server: TestPostgres | undefined = ENGINES.includes("postgres") ? await startPostgres() : undefined;
  try {
    const sqliteRuns: Awaited<ReturnType<typeof record>>[] = [];
    const postgresRuns: Awaited<ReturnType<typeof record>>[] = [];
    let store: WriteStore | undefined;
    for (let round = 0; round < ROUNDS; round++) {
      const onSqlite = await WriteStore.open(join(dir, `store-${round}.sqlite`));
      sqliteRuns.push(await record(onSqlite, streams));
      if (round === 0) store = onSqlite;
      else await onSqlite.close();
      if (!server) continue;
      const onPostgres = await WriteStore.open({ engine: "postgres", settings: postgresSettings(await server.database(`bench_recorder_${round}`)) });
      const run = await record(onPostgres, streams);
      const [sqliteWrites, postgresWrites] = [
        (await store!.database.sql().get<{ n: number }>("SELECT COUNT(*) AS n FROM writes"))!.n,
        (await onPostgres.database.sql().get<{ n: number }>("SELECT COUNT(*) AS n FROM writes"))!.n,
      ];
      if (run.stored !== sqliteRuns[0].stored || postgresWrites !== sqliteWrites)
        throw new Error(`PostgreSQL stored ${run.stored} (${postgresWrites} rows), SQLite ${sqliteRuns[0].stored} (${sqliteWrites})`);
      postgresRuns.push(run);
      await onPostgres.close();
    }
    if (!store) throw new Error("no round ran");
    const { stored, transactions } = sqliteRuns[0];
    const seconds = median(sqliteRuns.map((run) => run.seconds));
    /** What both engines' lines report of their runs: the median's seconds and events/s, and each round's events/s. */
    const figures = (runs: typeof sqliteRuns, medianSeconds: number) => ({
      events: prepared.length,
      burst: BURST,
      inFlight: IN_FLIGHT,
      audited: AUDITED,
      rounds: ROUNDS,
      seconds: round(medianSeconds),
      eventsPerSecond: Math.round(prepared.length / medianSeconds),
      eventsPerSecondByRound: runs.map((run) => Math.round(prepared.length / run.seconds)),
    });

    // The ceiling: the rows the recorder stored (its writes with their field changes), inserted again into a fresh
    // store with the same schema and indexes, BURST writes per transaction, with nothing to diff or classify.
    const rows = store.db.prepare("SELECT * FROM writes ORDER BY id").all() as Record<string, unknown>[];
    const fields = new Map<number, Record<string, unknown>[]>();
    for (const f of store.db.prepare("SELECT * FROM field_changes").all() as Record<string, unknown>[])
      (fields.get(f.write_id as number) ?? fields.set(f.write_id as number, []).get(f.write_id as number)!).push(f);
    const bare = await WriteStore.open(join(dir, "bare.sqlite"));
    const columns = Object.keys(rows[0]).filter((c) => c !== "id");
    const insertWrite = bare.db.prepare(`INSERT INTO writes (${columns.join(", ")}) VALUES (${columns.map(() => "?").join(", ")}) RETURNING id`);
    const insertField = bare.db.prepare("INSERT INTO field_changes (write_id, object_id, ts_ms, path, writer) VALUES (?, ?, ?, ?, ?)");
    bare.db.exec(`ATTACH DATABASE '${join(dir, "store-0.sqlite")}' AS source; INSERT INTO objects SELECT * FROM source.objects; DETACH DATABASE source`);
    const batchStart = performance.now();
    for (let at = 0; at < rows.length; at += BURST)
      bare.db.transaction(() => {
        for (const row of rows.slice(at, at + BURST)) {
          const { id } = insertWrite.get(...columns.map((c) => row[c])) as { id: number };
          for (const f of fields.get(row.id as number) ?? []) insertField.run(id, f.object_id, f.ts_ms, f.path, f.writer);
        }
      })();
    const batchSeconds = (performance.now() - batchStart) / 1000;
    await bare.close();

    const raw = new Database(join(dir, "raw.sqlite"));
    raw.pragma("journal_mode = WAL");
    raw.pragma("synchronous = NORMAL");
    raw.exec("CREATE TABLE events (id INTEGER PRIMARY KEY, ts INTEGER, body TEXT)");
    const insert = raw.prepare("INSERT INTO events (ts, body) VALUES (?, ?)");
    const one = raw.transaction((ts: number, body: string) => insert.run(ts, body));
    const peerStart = performance.now();
    for (const e of prepared) one(e.timeMs, JSON.stringify(e.obj));
    const peerSeconds = (performance.now() - peerStart) / 1000;

    report({
      bench: "recorder-throughput",
      ...figures(sqliteRuns, seconds),
      streams: streams.size,
      transactions,
      stored,
      peer: "raw JSON rows, one transaction per event, no diff",
      peerEventsPerSecond: Math.round(prepared.length / peerSeconds),
      ceiling: `the same ${rows.length} write rows and their field rows inserted bare, ${BURST} writes per transaction`,
      ceilingRowsPerSecond: Math.round(rows.length / batchSeconds),
      ofCeiling: round(prepared.length / seconds / (rows.length / batchSeconds)),
      storeMiB: round((await store.sizeBytes()) / 2 ** 20),
      target: "≥ 50,000 events/s in bursts of 100, ≥ 20,000 in bursts of 10, and ≥ 0.8× the ceiling",
    });
    // The same events into PostgreSQL, on this machine, in the same run.
    if (server) {
      // PostgreSQL's own ceiling: the same write and field rows inserted bare into a fresh database, a burst per
      // transaction as the recorder's (its locks and day partitions), each table's rows in one statement.
      const bareStore = await WriteStore.open({ engine: "postgres", settings: postgresSettings(await server.database("bench_recorder_bare")) });
      const objects = store.db.prepare("SELECT * FROM objects ORDER BY id").all() as Record<string, SqlValue>[];
      await bareStore.batch(() =>
        insertRows(
          bareStore.database.sql(),
          `INSERT INTO objects (${Object.keys(objects[0]).join(", ")})`,
          objects.map((o) => Object.values(o)),
        ),
      );
      const bareStart = performance.now();
      for (let at = 0; at < rows.length; at += BURST) {
        const burst = rows.slice(at, at + BURST);
        await bareStore.batch(
          async () => {
            const sql = bareStore.database.sql();
            await insertRows(
              sql,
              `INSERT INTO writes (id, ${columns.join(", ")})`,
              burst.map((row) => [row.id, ...columns.map((c) => row[c])] as SqlValue[]),
            );
            const fieldRows = burst.flatMap((row) =>
              (fields.get(row.id as number) ?? []).map((f) => [f.write_id, f.object_id, f.ts_ms, f.path, f.writer] as SqlValue[]),
            );
            await insertRows(sql, "INSERT INTO field_changes (write_id, object_id, ts_ms, path, writer)", fieldRows);
          },
          burst.map((row) => row.ts_ms as number),
        );
      }
      const bareSeconds = (performance.now() - bareStart) / 1000;
      await bareStore.close();
      const postgresSeconds = median(postgresRuns.map((run) => run.seconds));
      // Each round's two runs, side by side in time.
      const ofPeerByRound = postgresRuns.map((run, i) => round(sqliteRuns[i].seconds / run.seconds));
      report({
        bench: "recorder-throughput-postgres",
        ...figures(postgresRuns, postgresSeconds),
        stored: postgresRuns[0].stored,
        peer: "the same events into SQLite, this run",
        peerEventsPerSecond: Math.round(prepared.length / seconds),
        ofPeer: median(ofPeerByRound),
        ofPeerByRound,
        ceiling: `the same ${rows.length} write rows and their field rows inserted bare into PostgreSQL, ${BURST} writes per transaction`,
        ceilingRowsPerSecond: Math.round(rows.length / bareSeconds),
        ofCeiling: round(prepared.length / postgresSeconds / (rows.length / bareSeconds)),
        target: "≥ 0.8× SQLite's events/s",
      });
    }
    await store.close();
    raw.close();
  } finally {
    await server?.stop();
  }
}

void main();
