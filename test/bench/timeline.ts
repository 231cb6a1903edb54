/**
 * One busy object's timeline: WRITES (default 200,000) writes of one Connector over 4 days, each with
 * one or two changed fields, as a Connector rewritten every second or two would have. Times what the
 * timeline page asks for: WriteStore.timeline() at a laptop's 1,100 pixel columns, and one picked write
 * with its place and neighbours, with the answer's JSON size. Peer: the list of the first 5,000 writes
 * the page fetched before (a fortieth of these writes), the same store, the same run.
 * Run: npx tsx test/bench/timeline.ts
 */

import { join } from "node:path";
import { createRng } from "@/lib/scenario/rng";
import { WriteStore } from "@/lib/store/store";
import type { ObjectKey } from "@/lib/wire/objects";
import { percentile, report, round } from "./report";
import { scratchDir } from "./scratch";

const WRITES = Number(process.env.WRITES ?? 200_000);
const END_MS = Date.parse("2026-09-13T00:00:00Z");
const START_MS = END_MS - 4 * 86_400_000;
const KEY: ObjectKey = { cluster: "milo", group: "networking.datumapis.com", kind: "Connector", namespace: "demos", name: "busy" };
const RUNS = 15;

async function build(store: WriteStore) {
  const rng = createRng(11);
  await store.batch(async () => {
    let online = "true";
    for (let i = 0; i < WRITES; i++) {
      const tsMs = START_MS + Math.floor(((i + rng()) / WRITES) * (END_MS - START_MS));
      const routed = rng() < 0.001;
      if (routed) online = online === "true" ? "false" : "true";
      const paths = routed
        ? ["status.conditions[type=Ready].status"]
        : ["status.conditions[type=Ready].message", ...(rng() < 0.3 ? ["status.connectionDetails"] : [])];
      await store.record(KEY, {
        tsMs,
        cls: routed ? "routed" : "unrouted",
        writer: "network-services-operator",
        source: "watch",
        heartbeat: false,
        changes: paths.map((path) => ({ path, before: `offline since ${i - 1}`, after: `offline since ${i}` })),
        projection: { online, nodeId: "" },
      });
    }
  });
}

async function time<T>(work: () => Promise<T>): Promise<{ ms: number[]; value: T }> {
  const ms: number[] = [];
  let value!: T;
  for (let i = 0; i < RUNS; i++) {
    const start = performance.now();
    value = await work();
    ms.push(performance.now() - start);
  }
  return { ms, value };
}

const summary = (ms: number[]) => ({ p50Ms: round(percentile(ms, 50)), p95Ms: round(percentile(ms, 95)) });

async function main() {
  const store = await WriteStore.open(join(scratchDir("timeline"), "store.sqlite"));
  const buildStart = performance.now();
  await build(store);
  const buildSeconds = round((performance.now() - buildStart) / 1000);
  const timeline = await time(() => store.timeline(KEY, START_MS, END_MS, 1_100));
  const middle = START_MS + (END_MS - START_MS) / 2;
  const picked = await time(() => store.pickWrite(KEY, START_MS, END_MS, { nearMs: middle }));
  const list = await time(() => store.writesOf(KEY, START_MS, END_MS, 5_001));
  report({
    bench: "timeline",
    writes: WRITES,
    buildSeconds,
    timeline: { ...summary(timeline.ms), writesDrawn: timeline.value.total, answerBytes: JSON.stringify(timeline.value).length },
    pickedWrite: { ...summary(picked.ms), index: picked.value?.index, answerBytes: JSON.stringify(picked.value).length },
    peer: {
      what: "the first 5,000 writes as a list (the page's fetch before)",
      ...summary(list.ms),
      writesDrawn: 5_000,
      answerBytes: JSON.stringify(list.value.slice(0, 5_000)).length,
    },
  });
  await store.close();
}

void main();
