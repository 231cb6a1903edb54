/**
 * An audit webhook storm: 300 batches of 400 Metadata-level events (updates of many HTTPRoutes sent against the
 * version read) posted at 5,000 events/s, as the API server's batch backend posts them, with the dashboard killed
 * (SIGKILL) a third of the way in and started again on the same data; every batch not answered 200 is sent again.
 * Measured: the webhook's answer time and /healthz's (polled every 20 ms) as p50/p99, and whether every event was
 * stored exactly once. The peer, in the same run: a bare node:http server that reads each batch and answers 200,
 * the least any receiver costs.
 * Run: npm run build && npx tsx test/bench/webhook.ts
 */
import Database from "better-sqlite3";
import { createServer } from "node:http";
import { join } from "node:path";
import { spoolDrained, startApp, writeConfig, type TestApp } from "../helpers/app";
import { preconditionStorm } from "../helpers/audit-log";
import { freePort } from "../helpers/processes";
import { percentile, report, round } from "./report";
import { scratchDir } from "./scratch";

const BATCHES = Number(process.env.BATCHES ?? 300);
/** KILL=0: the same storm without the kill, for the steady answer time */
const KILL = process.env.KILL !== "0";
const BATCH_EVENTS = 400;
const EVENTS_PER_SECOND = 5_000;
const TOKEN = "bench-webhook-token";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function bodies(): { bodies: string[]; completed: number } {
  const lines: string[] = [];
  for (let seed = 1; lines.length < BATCHES * BATCH_EVENTS; seed++) lines.push(...preconditionStorm(Date.UTC(2026, 11, 1), 1000, seed, `route-${seed}`).lines);
  const used = lines.slice(0, BATCHES * BATCH_EVENTS);
  return {
    bodies: Array.from(
      { length: BATCHES },
      (_, i) => `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[${used.slice(i * BATCH_EVENTS, (i + 1) * BATCH_EVENTS).join(",")}]}`,
    ),
    completed: used.filter((l) => l.includes('"stage":"ResponseComplete"')).length,
  };
}

/** Posts every batch at the storm's pace (not waiting for answers), each until answered 200; the answers' times. */
async function storm(
  url: () => string,
  all: string[],
  onAnswered: (n: number) => void,
): Promise<{ answerMs: number[]; firstTryMs: number[]; retries: number }> {
  const answerMs: number[] = [];
  // the answers to batches answered at their first try: those the restart did not hold back
  const firstTryMs: number[] = [];
  let retries = 0;
  let answered = 0;
  const gapMs = (BATCH_EVENTS / EVENTS_PER_SECOND) * 1000;
  const sends = all.map(async (body, i) => {
    await sleep(i * gapMs);
    for (let attempt = 0; ; attempt++) {
      const startedMs = performance.now();
      try {
        const res = await fetch(url(), { method: "POST", headers: { "Content-Type": "application/json", Authorization: `Bearer ${TOKEN}` }, body });
        await res.arrayBuffer();
        if (res.status === 200) {
          answerMs.push(performance.now() - startedMs);
          if (attempt === 0) firstTryMs.push(performance.now() - startedMs);
          onAnswered(++answered);
          return;
        }
        await sleep(Number(res.headers.get("retry-after") ?? "1") * 1000);
      } catch {
        await sleep(200);
      }
      retries++;
    }
  });
  await Promise.all(sends);
  return { answerMs, firstTryMs, retries };
}

/** /healthz every 20 ms until stopped; the answers' times (a refused connection, while killed, is not one). */
function pollHealth(url: () => string): { stop: () => Promise<number[]> } {
  const times: number[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const startedMs = performance.now();
      try {
        const res = await fetch(url());
        await res.arrayBuffer();
        if (res.ok) times.push(performance.now() - startedMs);
      } catch {
        /* killed */
      }
      await sleep(20);
    }
  })();
  return {
    stop: async () => {
      running = false;
      await loop;
      return times;
    },
  };
}

async function main() {
  const { bodies: all, completed } = bodies();
  // The peer: read the batch, answer 200.
  const peer = createServer((req, res) => {
    req.on("data", () => undefined);
    req.on("end", () => res.writeHead(200, { "content-type": "application/json" }).end('{"status":"success"}'));
  });
  const peerPort = await freePort();
  await new Promise<void>((resolve) => peer.listen(peerPort, "127.0.0.1", resolve));
  const peerRun = await storm(
    () => `http://127.0.0.1:${peerPort}/`,
    all,
    () => undefined,
  );
  peer.close();

  const dataDir = scratchDir("webhook");
  const env = {
    CHURNSCOPE_CONFIG: writeConfig("audit:\n  webhookToken: { env: AUDIT_TOKEN }\nrecorder:\n  retentionDays: 3650\n"),
    CHURNSCOPE_DATA_DIR: dataDir,
    AUDIT_TOKEN: TOKEN,
    PORT: String(await freePort()),
  };
  let app: TestApp = await startApp(env);
  const health = pollHealth(() => `${app.url}/healthz`);
  let restarted: Promise<void> | undefined;
  const run = await storm(
    () => `${app.url}/api/audit/webhook/bench`,
    all,
    (n) => {
      if (!KILL || restarted || n < BATCHES / 3) return;
      process.kill(-app.running.child.pid!, "SIGKILL");
      restarted = (async () => {
        await new Promise((r) => app.running.child.once("exit", r));
        app = await startApp(env);
      })();
    },
  );
  await restarted;
  const healthMs = await health.stop();
  const drainStartedMs = performance.now();
  await spoolDrained(app.url, 300_000);
  const drainMs = performance.now() - drainStartedMs;
  const db = new Database(join(dataDir, "churnscope.sqlite"), { readonly: true });
  const stored = db.prepare("SELECT COUNT(*) AS n, COUNT(DISTINCT request_key) AS keys FROM audit_requests").get() as { n: number; keys: number };
  db.close();
  await app.stop();
  report({
    bench: "audit webhook storm",
    batches: BATCHES,
    eventsPerBatch: BATCH_EVENTS,
    eventsPerSecond: EVENTS_PER_SECOND,
    killedAfterBatches: KILL ? Math.ceil(BATCHES / 3) : null,
    webhook: {
      p50Ms: round(percentile(run.answerMs, 50)),
      p99Ms: round(percentile(run.answerMs, 99)),
      retries: run.retries,
      // without the batches sent while the dashboard was down, which queued for its start
      firstTry: { answers: run.firstTryMs.length, p50Ms: round(percentile(run.firstTryMs, 50)), p99Ms: round(percentile(run.firstTryMs, 99)) },
    },
    healthz: { p50Ms: round(percentile(healthMs, 50)), p99Ms: round(percentile(healthMs, 99)), answers: healthMs.length },
    drainAfterLastAnswerMs: round(drainMs),
    exact: stored.n === completed && stored.keys === completed,
    storedRequests: stored.n,
    completedWrites: completed,
    peer: { what: "bare node:http, body read, 200", p50Ms: round(percentile(peerRun.answerMs, 50)), p99Ms: round(percentile(peerRun.answerMs, 99)) },
    target: { webhookP99Ms: 50, healthzP99Ms: 50 },
  });
}

void main();
