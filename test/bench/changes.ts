/**
 * What changed, at fleet scale: 5,000 Deployments, each first seen with what it ran, 20 writers writing 200,000 times
 * over 24 hours, and 10,000 recorded changes in the range: a rollout storm (every Deployment at once, at 12:00) and
 * each Deployment once more over the day. Stored through the store's own API (the recorder's path), then asked of a
 * running dashboard over HTTP as a page asks: /api/changes with the chart's onset, and /api/markers.
 * Reports each answer's p50 and size, the bounds it kept (changes tested and listed, markers drawn), and the store's bytes in
 * the store. Peer: /api/objects over the same range and store, in the same run (the Objects page's own question).
 * Run: npm run build && npx tsx test/bench/changes.ts
 */
import { statSync } from "node:fs";
import Database from "better-sqlite3";
import { join } from "node:path";
import type { RecordedChange } from "@/lib/churn/changes";
import { createRng } from "@/lib/scenario/rng";
import { WriteStore } from "@/lib/store/store";
import type { StoredWrite } from "@/lib/wire/objects";
import { startApp, writeConfig } from "../helpers/app";
import { percentile, report, round } from "./report";
import { scratchDir } from "./scratch";

const WORKLOADS = 5_000;
const WRITERS = 20;
const WRITES = 200_000;
const END_MS = Date.parse("2026-09-12T00:00:00Z");
const START_MS = END_MS - 86_400_000;
const STORM_MS = START_MS + 12 * 3_600_000;
const RUNS = 9;

const key = (i: number) => ({ cluster: "fleet", group: "apps", kind: "Deployment", namespace: `team-${i % 50}`, name: `svc-${i}` });
const image = (i: number, tag: string) => `registry.example/svc-${i}:${tag}`;
const change = (i: number, from: string, to: string): RecordedChange => ({
  summary: `image svc-${i} ${from} → ${to}`,
  diff: [{ path: "spec.containers[name=main].image", before: image(i, from), after: image(i, to) }],
  subject: { serviceAccount: `svc-${i}`, images: [image(i, to)] },
});
const write = (tsMs: number, writer: string, recorded?: RecordedChange): StoredWrite => ({
  tsMs,
  cls: recorded ? "routed" : "unrouted",
  writer,
  source: "watch",
  heartbeat: false,
  changes: [],
  projection: {},
  ...(recorded && { change: recorded }),
});

async function build(dataDir: string): Promise<number> {
  const store = await WriteStore.open(join(dataDir, "churnscope.sqlite"));
  const rng = createRng(41);
  const buildStart = performance.now();
  await store.batch(async () => {
    for (let i = 0; i < WORKLOADS; i++)
      await store.recordFirstSeen(key(i), START_MS - 86_400_000, {}, undefined, { ...change(i, "v0", "v1"), summary: `running svc-${i} v1` });
  });
  // The writers' writes, each to one of the writers' own Leases, in time order; writer 0 triples after the storm.
  const times = Array.from({ length: WRITES }, () => START_MS + Math.floor(rng() * 86_400_000)).sort((a, b) => a - b);
  for (let done = 0; done < times.length; done += 10_000)
    await store.batch(async () => {
      for (const ts of times.slice(done, done + 10_000)) {
        const writer = ts > STORM_MS && rng() < 0.5 ? 0 : Math.floor(rng() * WRITERS);
        await store.record(
          { cluster: "fleet", group: "coordination.k8s.io", kind: "Lease", namespace: "leases", name: `svc-${writer}` },
          write(ts, `svc-${writer}`),
        );
      }
    }, [START_MS, END_MS]);
  // The storm: every Deployment at 12:00; then each once more, spread over the day.
  await store.batch(async () => {
    for (let i = 0; i < WORKLOADS; i++) await store.record(key(i), write(STORM_MS, "kustomize-controller", change(i, "v1", "v2")));
    for (let i = 0; i < WORKLOADS; i++)
      await store.record(key(i), write(START_MS + 1 + Math.floor(rng() * 86_399_000), "kustomize-controller", change(i, "v2", "v3")));
  }, [START_MS, END_MS]);
  const seconds = (performance.now() - buildStart) / 1000;
  await store.close();
  return seconds;
}

async function timed(url: string): Promise<{ p50Ms: number; bytes: number; body: { data: unknown; warnings?: string[] } }> {
  const times: number[] = [];
  let text = "";
  for (let i = 0; i < RUNS; i++) {
    const t = performance.now();
    const response = await fetch(url);
    text = await response.text();
    times.push(performance.now() - t);
    if (!response.ok) throw new Error(`${url}: ${response.status} ${text.slice(0, 300)}`);
  }
  return { p50Ms: round(percentile(times, 50)), bytes: Buffer.byteLength(text), body: JSON.parse(text) as { data: unknown; warnings?: string[] } };
}

async function main() {
  const dataDir = scratchDir("changes");
  const buildSeconds = await build(dataDir);
  const bytes = statSync(join(dataDir, "churnscope.sqlite")).size;
  // The changes' own bytes: the table and its indexes, page by page (SQLite's dbstat).
  const db = new Database(join(dataDir, "churnscope.sqlite"), { readonly: true });
  const changeBytes = (db.prepare("SELECT SUM(pgsize) AS b FROM dbstat WHERE name IN ('changes', 'changes_ts', 'changes_object')").get() as { b: number }).b;
  const storedChanges = (db.prepare("SELECT COUNT(*) AS n FROM changes").get() as { n: number }).n;
  db.close();
  const app = await startApp({ CHURNSCOPE_DATA_DIR: dataDir, CHURNSCOPE_CONFIG: writeConfig("") });
  try {
    const range = `from=${new Date(START_MS).toISOString()}&to=${new Date(END_MS).toISOString()}`;
    const changes = await timed(`${app.url}/api/changes?${range}&onset=${STORM_MS + 60_000}`);
    const markers = await timed(`${app.url}/api/markers?${range}`);
    const objects = await timed(`${app.url}/api/objects?${range}`);
    const answer = changes.body.data as { total: number; tested: number; changes: unknown[]; conclusion: string };
    report({
      bench: "changes",
      workloads: WORKLOADS,
      writes: WRITES,
      changesInRange: answer.total,
      changesTested: answer.tested,
      changesListed: answer.changes.length,
      conclusion: answer.conclusion,
      changesAnswer: { p50Ms: changes.p50Ms, bytes: changes.bytes, warnings: changes.body.warnings ?? [] },
      markersAnswer: { p50Ms: markers.p50Ms, bytes: markers.bytes, drawn: (markers.body.data as unknown[]).length, warnings: markers.body.warnings ?? [] },
      peer: "/api/objects, same range and store",
      peerP50Ms: objects.p50Ms,
      storeBytes: bytes,
      changes: { stored: storedChanges, bytes: changeBytes, bytesPerChange: round(changeBytes / storedChanges, 0) },
      buildSeconds: round(buildSeconds, 1),
      target: "bounded: at most 10,000 changes tested, 500 listed and 200 drawn per answer, each answer under a second",
    });
  } finally {
    await app.stop();
  }
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
