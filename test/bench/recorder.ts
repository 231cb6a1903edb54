/**
 * Recorder throughput: watch events diffed, classified, attributed and stored per second by the
 * recorder's core into a real SQLite store, replaying the replay's 104k object versions (Connectors
 * in both clusters, Leases, HTTPProxies) as ADDED/MODIFIED/DELETED events. Target ≥ 20,000/s.
 * Events go in as the watcher hands them over: a burst (BURST, default 100, same resource) per transaction.
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
      recorder = new ProfileRecorder(store, cluster, profiles.length ? profiles : [{ ...DEFAULT_PROFILES[0], name: key, group, kind, resource: kind.toLowerCase() }]);
      recorders.set(key, recorder);
    }
    return recorder;
  };
  const alive = new Set<number>();
  const events = replay.sink.writes.map((w) => {
    const ref = replay.sink.objects[w.objectIndex];
    const last = w.object ?? (replay.sink.writes.findLast?.((x) => x.objectIndex === w.objectIndex && x.object && x.timeMs < w.timeMs)?.object ?? null);
    const type = w.object === null ? "DELETED" : alive.has(w.objectIndex) ? "MODIFIED" : "ADDED";
    if (w.object === null) alive.delete(w.objectIndex);
    else alive.add(w.objectIndex);
    return { ref, type, obj: (w.object ?? last) as KubeObject | null, timeMs: w.timeMs };
  }).filter((e) => e.obj !== null);
  // A deleted object's event carries its last version with a fresh resourceVersion, as the API server sends it.
  let rv = 1_000_000;
  const prepared = events.map((e) => ({ ...e, obj: { ...(e.obj as KubeObject), metadata: { ...(e.obj as KubeObject).metadata, resourceVersion: String(rv++) } } as KubeObject }));

  // As the watcher hands them over: the events of one burst (here up to BURST, per resource) in one transaction.
  const start = performance.now();
  let stored = 0;
  let burst: typeof prepared = [];
  const flush = () => {
    if (!burst.length) return;
    const { ref } = burst[0];
    stored += recorderOf(ref.cluster, ref.group, ref.kind).applyEvents(burst.map((e) => ({ type: e.type, obj: e.obj, tsMs: e.timeMs })));
    burst = [];
  };
  for (const e of prepared) {
    if (burst.length && (burst.length >= BURST || burst[0].ref.cluster !== e.ref.cluster || burst[0].ref.kind !== e.ref.kind)) flush();
    burst.push(e);
  }
  flush();
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
