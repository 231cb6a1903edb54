/**
 * The audit webhook through a kill -9: a storm of batches (Metadata-level updates of many HTTPRoutes, sent against
 * the version read, as client-go's Update does) posted four at a time, as the API server's batch backend posts
 * them, the dashboard killed with SIGKILL a third of the way in and started again on the same data directory,
 * every batch not answered 200 sent again (as the API server retries). Every event is then stored exactly once,
 * and every update's no-op flag is what the simulated API server did, where the preconditions tell.
 */
import Database from "better-sqlite3";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spoolDrained, startApp, writeConfig, type TestApp } from "../helpers/app";
import { preconditionStorm, type SimulatedWrite } from "../helpers/audit-log";
import { freePort } from "../helpers/processes";

const TOKEN = "spool-webhook-token";
const START = Date.UTC(2026, 11, 1, 9, 0, 0);
const ROUTES = 30;
const STEPS = 300;
const BATCH_EVENTS = 400;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let app: TestApp;
let env: Record<string, string>;
let dataDir = "";
const storms = Array.from({ length: ROUTES }, (_, i) => preconditionStorm(START, STEPS, i + 1, `route-${i}`));
let lines: string[] = [];
let killedAfter = 0;

/** Posts one batch until it is answered 200, as the API server's webhook backend does. */
async function deliver(body: string): Promise<void> {
  for (;;) {
    try {
      const res = await fetch(`${app.url}/api/audit/webhook/storm`, {
        method: "POST",
        headers: { "Content-Type": "application/json", Authorization: `Bearer ${TOKEN}` },
        body,
      });
      await res.arrayBuffer();
      if (res.status === 200) return;
      expect([429, 503], `webhook answered ${res.status}`).toContain(res.status);
      await sleep(Number(res.headers.get("retry-after") ?? "1") * 1000);
    } catch {
      await sleep(200); // killed, or not up again yet
    }
  }
}

beforeAll(async () => {
  // The storms' lines interleaved by time, as one API server logs them.
  lines = storms
    .flatMap((s) => s.lines.map((line) => ({ line, at: Date.parse(JSON.parse(line).requestReceivedTimestamp) })))
    .sort((a, b) => a.at - b.at)
    .map((l) => l.line);
  dataDir = mkdtempSync(join(tmpdir(), "churnscope-spool-"));
  env = {
    CHURNSCOPE_CONFIG: writeConfig("audit:\n  webhookToken: { env: AUDIT_TOKEN }\n  maxSpoolMiB: 4\nrecorder:\n  retentionDays: 3650\n"),
    CHURNSCOPE_DATA_DIR: dataDir,
    AUDIT_TOKEN: TOKEN,
    PORT: String(await freePort()),
  };
  app = await startApp(env);
  const batches = Array.from({ length: Math.ceil(lines.length / BATCH_EVENTS) }, (_, i) => lines.slice(i * BATCH_EVENTS, (i + 1) * BATCH_EVENTS));
  const bodies = batches.map((items) => `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","metadata":{},"items":[${items.join(",")}]}`);
  let next = 0;
  let answered = 0;
  let killed: Promise<void> | undefined;
  const sender = async () => {
    while (next < bodies.length) {
      await deliver(bodies[next++]);
      answered++;
      if (!killed && answered >= bodies.length / 3) {
        killedAfter = answered;
        // SIGKILL, no chance to finish anything; then the same dashboard again on the same data.
        process.kill(-app.running.child.pid!, "SIGKILL");
        killed = (async () => {
          await new Promise((r) => app.running.child.once("exit", r));
          app = await startApp(env);
        })();
      }
    }
  };
  await Promise.all([sender(), sender(), sender(), sender()]);
  await killed;
  await spoolDrained(app.url, 120_000);
}, 300_000);

afterAll(async () => {
  await app?.stop();
});

function store() {
  return new Database(join(dataDir, "churnscope.sqlite"), { readonly: true });
}

describe("the audit webhook through a kill -9", () => {
  it("stores every event's request exactly once", () => {
    expect(killedAfter).toBeGreaterThan(0);
    const expected = lines.filter((l) => l.includes('"stage":"ResponseComplete"')).length;
    const db = store();
    try {
      expect(db.prepare("SELECT COUNT(*) AS n, COUNT(DISTINCT request_key) AS keys FROM audit_requests WHERE cluster = 'storm'").get()).toEqual({
        n: expected,
        keys: expected,
      });
    } finally {
      db.close();
    }
  });

  it("flags each update as the simulated API server did it, where the next write's precondition tells", () => {
    const db = store();
    try {
      const flags = new Map(
        (db.prepare("SELECT request_key AS k, noop FROM audit_requests WHERE cluster = 'storm'").all() as { k: string; noop: number | null }[]).map((r) => [
          r.k,
          r.noop,
        ]),
      );
      let told = 0;
      for (const { writes } of storms) {
        const succeeded = writes.filter((w: SimulatedWrite) => w.code === 200);
        for (const [i, w] of succeeded.entries()) {
          const next = succeeded[i + 1];
          const expected = w.precondition === "" || next === undefined || next.precondition === "" ? null : w.changed ? 0 : 1;
          expect(flags.get(`${w.auditID}/ResponseComplete`), w.auditID).toBe(expected);
          if (expected !== null) told++;
        }
      }
      expect(told).toBeGreaterThan(ROUTES * STEPS * 0.5);
    } finally {
      db.close();
    }
  });
});
