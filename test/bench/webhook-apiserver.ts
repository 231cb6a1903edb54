/**
 * The audit webhook fed by a real kube-apiserver in batch mode (test/kube/build.sh), with a Metadata-level policy:
 * WORKERS (24) clients each read an HTTPRoute and update it with what they read (client-go's Update), two times in
 * three unchanged, for SECONDS (60). A TLS proxy between the API server and the dashboard times every answer.
 * Measured: the webhook's answer p50/p99, the events/s it took in, and the store-backed view APIs (Clients, Objects)
 * asked every 100 ms during the load against the same when the load is over; then every write the API server's own
 * log holds is checked to be stored once. The peer is the idle figure of the same APIs in the same run.
 * The dashboard runs on one core and everything else (the API server, etcd, the clients, the proxy) on the other, as
 * in a cluster, where the dashboard's pod does not share its CPU with the control plane (PIN=0: all on both).
 * KILL=1: the dashboard is killed with SIGKILL a third of the way in and started again on the same data and ports;
 * the API server's own retries (after its 10 s backoff) must bring every write in, once.
 * Target: view API p99 during the load ≤ 1.5× idle.
 * Run: npm run build && npx tsx test/bench/webhook-apiserver.ts
 */
import Database from "better-sqlite3";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { Agent, fetch } from "undici";
import { execFileSync } from "node:child_process";
import { spoolDrained, startApp, testEnv, writeConfig } from "../helpers/app";
import { metadataPolicyFile, selfSignedCert, startControlPlane, type ControlPlaneUser } from "../helpers/control-plane";
import { createNamespaces } from "../helpers/controllers";
import { startDelayingProxy } from "../helpers/delaying-proxy";
import { freePort, start } from "../helpers/processes";
import { ROOT } from "../helpers/root";
import { percentile, report, round } from "./report";
import { scratchDir } from "./scratch";

const PIN = process.env.PIN !== "0";
/** KILL=1: the dashboard is killed (SIGKILL) a third of the way in and started again; the API server retries */
const KILL = process.env.KILL === "1";
/** VIEWS=0: nothing asks the views during the load, for the webhook's answers alone (nor with KILL=1) */
const VIEWS = process.env.VIEWS !== "0" && !KILL;
const WORKERS = Number(process.env.WORKERS ?? 24);
const SECONDS = Number(process.env.SECONDS ?? 60);
const IDLE_SECONDS = 20;
const TOKEN = "bench-webhook-token";
const NAMESPACE = "bench";
const CLUSTER = "bench";
const DRIVER: ControlPlaneUser = { name: "route-controller", token: "route-controller-token" };
const insecure = new Agent({ connect: { rejectUnauthorized: false }, connections: WORKERS + 4 });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
type Route = { metadata: { name: string; resourceVersion: string; labels?: Record<string, string> } } & Record<string, unknown>;

/** Asks the view APIs every 100 ms until `running()` is false; their answer times. */
async function askViews(appUrl: string, running: () => boolean): Promise<number[]> {
  const times: number[] = [];
  const paths = [`/api/clients?from=now-1h&to=now&cluster=${CLUSTER}`, "/api/objects?from=now-1h&to=now"];
  for (let i = 0; running(); i++) {
    const startedMs = performance.now();
    const res = await fetch(appUrl + paths[i % paths.length]);
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${paths[i % paths.length]} answered ${res.status}`);
    times.push(performance.now() - startedMs);
    await sleep(100);
  }
  return times;
}

/** The completed writes in the bench's namespace, as the API server's own log file holds them. */
function loggedWrites(path: string): number {
  return readFileSync(path, "utf8")
    .split("\n")
    .filter((l) => l.includes(`"namespace":"${NAMESPACE}"`))
    .map((l) => JSON.parse(l) as { stage: string; verb: string; objectRef?: { namespace?: string } })
    .filter((e) => e.stage === "ResponseComplete" && ["create", "update", "patch", "delete"].includes(e.verb) && e.objectRef?.namespace === NAMESPACE).length;
}

function storedRequests(dataDir: string): number {
  const db = new Database(join(dataDir, "churnscope.sqlite"), { readonly: true });
  try {
    return (db.prepare("SELECT COUNT(*) AS n FROM audit_requests WHERE cluster = ? AND namespace = ?").get(CLUSTER, NAMESPACE) as { n: number }).n;
  } finally {
    db.close();
  }
}

async function untilStored(dataDir: string, logged: number, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (storedRequests(dataDir) < logged && Date.now() < deadline) await sleep(1000);
}

const summary = (ms: number[]) =>
  ms.length === 0 ? null : { n: ms.length, p50: round(percentile(ms, 50), 1), p99: round(percentile(ms, 99), 1), max: round(Math.max(...ms), 1) };

/** `npm start` on the second core. */
const onSecondCore = (env: Record<string, string | undefined>) =>
  start("taskset", ["-c", "1", process.execPath, join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "lib", "cli", "start.ts")], {
    cwd: ROOT,
    env: testEnv(env),
  });

async function main(): Promise<void> {
  // This process and what it starts (etcd, the API server) on the first core; the dashboard is moved to the second.
  if (PIN) execFileSync("taskset", ["-a", "-pc", "0", String(process.pid)]);
  const tls = selfSignedCert(scratchDir("tls"));
  const policy = metadataPolicyFile();
  const proxy = await startDelayingProxy("https://127.0.0.1:1", tls, 0);
  proxy.holdEvery = 1;
  const cp = await startControlPlane({
    users: [DRIVER],
    auditPolicy: policy,
    webhook: { url: `${proxy.url}/api/audit/webhook/${CLUSTER}`, token: TOKEN, caFile: tls.certFile },
  });
  const dataDir = scratchDir("webhook");
  const [appPort, tlsPort] = [await freePort(), await freePort()];
  const appEnv = {
    CHURNSCOPE_CONFIG: writeConfig(
      [`server:`, `  tls: { port: ${tlsPort}, certFile: ${tls.certFile}, keyFile: ${tls.keyFile} }`, `audit:`, `  webhookToken: { env: AUDIT_TOKEN }`].join(
        "\n",
      ),
    ),
    CHURNSCOPE_DATA_DIR: dataDir,
    AUDIT_TOKEN: TOKEN,
    PORT: String(appPort),
  };
  const launch = PIN ? onSecondCore : undefined;
  let app = await startApp(appEnv, launch);
  proxy.target = `https://127.0.0.1:${tlsPort}`;
  try {
    await createNamespaces(cp.kubeConfig(), [NAMESPACE]);
    const base = `/apis/gateway.networking.k8s.io/v1/namespaces/${NAMESPACE}/httproutes`;
    const call = async (method: string, path: string, body?: unknown) => {
      const res = await fetch(cp.url + path, {
        method,
        headers: { Authorization: `Bearer ${DRIVER.token}`, "Content-Type": "application/json", "User-Agent": "route-controller/v2.0.1 (linux/amd64)" },
        body: body === undefined ? undefined : JSON.stringify(body),
        dispatcher: insecure,
      });
      const text = await res.text();
      return { status: res.status, obj: res.ok ? (JSON.parse(text) as Route) : undefined };
    };
    for (let w = 0; w < WORKERS; w++)
      await call("POST", base, {
        apiVersion: "gateway.networking.k8s.io/v1",
        kind: "HTTPRoute",
        metadata: { name: `route-${w}` },
        spec: { hostnames: [`r${w}.example.com`] },
      });

    let writes = 0;
    const load = async (seconds: number) => {
      const endMs = Date.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: WORKERS }, async (_, w) => {
          for (let n = 0; Date.now() < endMs; n++) {
            const read = await call("GET", `${base}/route-${w}`);
            const obj = read.obj!;
            const changed = n % 3 === 2 ? { ...obj, metadata: { ...obj.metadata, labels: { round: String(n) } } } : obj;
            const put = await call("PUT", `${base}/route-${w}`, changed);
            if (put.status !== 200) throw new Error(`update answered ${put.status}`);
            writes++;
          }
        }),
      );
    };
    // A first load, so the store the views read holds data; the figures during the load; then the same once it is
    // over and drained, over the same data (a view's answer grows with the writes in its range).
    await load(10);
    await sleep(3000);
    await spoolDrained(app.url, 120_000);
    proxy.stats.answerMs.length = 0;
    const eventsBefore = proxy.stats.events;
    const writesBefore = writes;
    let loading = true;
    const startedMs = performance.now();
    let restartSeconds: number | null = null;
    const killed = (async () => {
      if (!KILL) return;
      await sleep((SECONDS * 1000) / 3);
      const exited = new Promise((resolve) => app.running.child.once("exit", resolve));
      process.kill(-app.running.child.pid!, "SIGKILL");
      await exited;
      const restartedMs = performance.now();
      app = await startApp(appEnv, launch);
      restartSeconds = (performance.now() - restartedMs) / 1000;
    })();
    const [, duringMs] = await Promise.all([load(SECONDS).finally(() => (loading = false)), VIEWS ? askViews(app.url, () => loading) : [], killed]);
    const loadSeconds = (performance.now() - startedMs) / 1000;
    const answerMs = [...proxy.stats.answerMs];
    const events = proxy.stats.events - eventsBefore;
    // The API server's last batch leaves within its batch wait (1 s); then the spool drains.
    await sleep(3000);
    const drainStartedMs = performance.now();
    await spoolDrained(app.url, 300_000);
    // After a kill, the API server sends again what failed once its backoff (10 s) is over.
    if (KILL) await untilStored(dataDir, loggedWrites(cp.auditLogPath), 120_000);
    const drainSeconds = (performance.now() - drainStartedMs) / 1000;
    let idle = true;
    setTimeout(() => (idle = false), IDLE_SECONDS * 1000);
    const idleMs = await askViews(app.url, () => idle);

    const logged = loggedWrites(cp.auditLogPath);
    const stored = storedRequests(dataDir);
    report({
      bench: "webhook-apiserver",
      pinned: PIN ? "dashboard on core 1, the rest on core 0" : "none",
      workers: WORKERS,
      seconds: round(loadSeconds, 1),
      apiserverWritesPerSecond: Math.round((writes - writesBefore) / loadSeconds),
      webhook: { batches: answerMs.length, eventsPerSecond: Math.round(events / loadSeconds), answerMs: summary(answerMs) },
      views: { idle: summary(idleMs), duringLoad: summary(duringMs), p99Ratio: VIEWS ? round(percentile(duringMs, 99) / percentile(idleMs, 99)) : null },
      drainedSecondsAfterLoad: round(drainSeconds, 1),
      kill: KILL ? { atSeconds: round(SECONDS / 3, 1), restartSeconds: round(restartSeconds ?? 0, 1) } : null,
      exact: { loggedWrites: logged, stored, same: logged === stored },
    });
    if (logged !== stored) process.exitCode = 1;
  } finally {
    await app.stop();
    await cp.stop();
    await proxy.stop();
  }
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
