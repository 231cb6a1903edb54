/**
 * One audit webhook batch of 10,000 events (Metadata-level HTTPRoute updates sent against the version read, as
 * `preconditionStorm` makes them), posted to a dashboard on each store engine in the same run: SQLite (its file in the
 * data directory) and PostgreSQL (Debian's, started here on the same 2 cores and disk). Measured: the answer's time
 * (the batch spooled) and the time until it is stored (the spool empty), and that every completed request is stored
 * once (the Clients view's total against the batch's own count).
 * Run: npm run build && npx tsx test/bench/webhook-batch.ts
 */
import { spoolDrained, startApp, writeConfig } from "../helpers/app";
import { preconditionStorm } from "../helpers/audit-log";
import { startPostgres } from "../helpers/postgres";
import { waitForHttp } from "../helpers/processes";
import { report, round } from "./report";

const EVENTS = Number(process.env.EVENTS ?? 10_000);
const TOKEN = "bench-webhook-token";
const START_MS = Date.UTC(2026, 11, 1);

function batch(): { body: string; completed: number } {
  const lines: string[] = [];
  for (let seed = 1; lines.length < EVENTS; seed++) lines.push(...preconditionStorm(START_MS, 1000, seed, `route-${seed}`).lines);
  const used = lines.slice(0, EVENTS);
  return {
    body: `{"kind":"EventList","apiVersion":"audit.k8s.io/v1","items":[${used.join(",")}]}`,
    completed: used.filter((l) => l.includes('"stage":"ResponseComplete"')).length,
  };
}

async function ingestOnce(env: Record<string, string>, body: string): Promise<{ answerMs: number; storedMs: number; stored: number }> {
  const app = await startApp({
    CHURNSCOPE_CONFIG: writeConfig("audit:\n  webhookToken: { env: AUDIT_TOKEN }\n  maxWebhookMiB: 256\nrecorder:\n  retentionDays: 3650\n"),
    AUDIT_TOKEN: TOKEN,
    ...env,
  });
  try {
    // Live (/healthz) comes before the store is open (/readyz): a batch posted between is answered 503.
    await waitForHttp(`${app.url}/readyz`, app.running);
    const startedMs = performance.now();
    const res = await fetch(`${app.url}/api/audit/webhook/bench`, { method: "POST", headers: { Authorization: `Bearer ${TOKEN}` }, body });
    if (res.status !== 200) throw new Error(`the webhook answered ${res.status}: ${await res.text()}`);
    const answerMs = performance.now() - startedMs;
    await spoolDrained(app.url, 300_000);
    const storedMs = performance.now() - startedMs;
    const range = `from=${new Date(START_MS - 86_400_000).toISOString()}&to=${new Date(START_MS + 30 * 86_400_000).toISOString()}`;
    const clients = (await (await fetch(`${app.url}/api/clients?${range}`)).json()) as { data: { total: number } };
    return { answerMs, storedMs, stored: clients.data.total };
  } finally {
    await app.stop();
  }
}

async function main() {
  const { body, completed } = batch();
  const sqlite = await ingestOnce({}, body);
  const server = await startPostgres();
  let postgres: typeof sqlite;
  try {
    postgres = await ingestOnce({ CHURNSCOPE_DATABASE_URL: await server.database("bench_webhook") }, body);
  } finally {
    await server.stop();
  }
  for (const [engine, run] of [
    ["sqlite", sqlite],
    ["postgres", postgres],
  ] as const) {
    if (run.stored !== completed) throw new Error(`${engine}: ${run.stored} requests stored of the batch's ${completed}`);
    report({
      bench: "webhook-batch",
      engine,
      events: EVENTS,
      completedRequests: completed,
      batchMiB: round(body.length / 2 ** 20),
      answerMs: round(run.answerMs),
      storedSeconds: round(run.storedMs / 1000),
      requestsPerSecond: Math.round(completed / (run.storedMs / 1000)),
      peer: engine === "postgres" ? "the same batch into SQLite, this run" : undefined,
      peerStoredSeconds: engine === "postgres" ? round(sqlite.storedMs / 1000) : undefined,
      storedOnce: run.stored === completed,
    });
  }
}

void main().catch((error: Error) => {
  console.error(error.stack ?? error.message);
  process.exit(1);
});
