/**
 * Recorder throughput: watch events diffed, classified, attributed and stored per second by the
 * recorder's core into a real SQLite store, replaying the replay's 104k object versions (Connectors
 * in both clusters, Leases, HTTPProxies) as ADDED/MODIFIED/DELETED events. Target ≥ 20,000/s.
 * Events go in as the watchers hand them over: each resource's stream in bursts (BURST, default 100)
 * of one transaction each; BURST=1 is a quiet cluster, an event per transaction.
 * Peer (ceiling): the same events stored as raw JSON rows, one transaction per event, no diff.
 * Run: npx tsx test/bench/recorder.ts
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { DEFAULT_REPLAY } from "@/lib/demo/params";
import { generateReplay } from "@/lib/demo/replay";
import { ProfileRecorder, type KubeObject } from "@/lib/recorder/core";
import { WriteStore } from "@/lib/store/store";
import { report, round } from "./report";

const BURST = Number(process.env.BURST ?? 100);

function main() {
  const replay = generateReplay(DEFAULT_REPLAY);
  const dir = mkdtempSync(join(tmpdir(), "churnscope-bench-recorder-"));
  const store = new WriteStore(join(dir, "store.sqlite"));
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
  const streams = new Map<string, typeof prepared>();
  for (const e of prepared) {
    const key = `${e.ref.cluster}/${e.ref.group}/${e.ref.kind}`;
    const stream = streams.get(key) ?? [];
    stream.push(e);
    streams.set(key, stream);
  }
  let transactions = 0;
  const start = performance.now();
  let stored = 0;
  const cursors = [...streams.values()].map((events) => ({ events, at: 0 }));
  // Round-robin over the streams, a burst at a time, as their watchers' bursts would interleave.
  while (cursors.some((c) => c.at < c.events.length)) {
    for (const cursor of cursors) {
      const burst = cursor.events.slice(cursor.at, cursor.at + BURST);
      if (burst.length === 0) continue;
      cursor.at += burst.length;
      const { ref } = burst[0];
      stored += recorderOf(ref.cluster, ref.group, ref.kind).applyEvents(burst.map((e) => ({ type: e.type, obj: e.obj, tsMs: e.timeMs })));
      transactions++;
    }
  }
  const seconds = (performance.now() - start) / 1000;

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
    events: prepared.length,
    burst: BURST,
    streams: streams.size,
    transactions,
    stored,
    seconds: round(seconds),
    eventsPerSecond: Math.round(prepared.length / seconds),
    peer: "raw JSON rows, one transaction per event, no diff",
    peerEventsPerSecond: Math.round(prepared.length / peerSeconds),
    storeMiB: round(store.sizeBytes() / 2 ** 20),
    target: "≥ 20,000 events/s",
  });
  store.close();
  raw.close();
}

main();
