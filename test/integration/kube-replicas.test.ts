/**
 * Two replicas on one PostgreSQL database, against a real kube-apiserver and etcd, with the server's own audit log as
 * the ground truth: its audit webhook spread over both replicas (through a proxy that sends batches to each in turn,
 * holding every other one, as a Service in front of a busy API server would); the recording replica killed with
 * SIGKILL while the controllers churn, and the other taking the cluster over; and PostgreSQL itself killed and
 * started again under load.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { spoolDrained, startApp, writeConfig, type TestApp } from "../helpers/app";
import { serverWrites, type ServerWrite } from "../helpers/audit-truth";
import { selfSignedCert, startControlPlane, type ControlPlane } from "../helpers/control-plane";
import {
  connectorChurn,
  CONTROLLER_USERS,
  createNamespaces,
  periodicStatusPatches,
  PROJECT_NAMESPACE,
  ROUTE_NAMESPACE,
  type LedgerEntry,
} from "../helpers/controllers";
import { startDelayingProxy, type DelayingProxy } from "../helpers/delaying-proxy";
import { startPostgres, type TestPostgres } from "../helpers/postgres";
import { freePort } from "../helpers/processes";

const TOKEN = "replicas-webhook-token";
const CLUSTER = "kind-dev";
const KIND_OF: Record<string, string> = { connectors: "Connector", httproutes: "HTTPRoute" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let db: TestPostgres;
let databaseUrl = "";
let cp: ControlPlane;
let proxy: DelayingProxy;
let hubNamespace = "";
const ledger: LedgerEntry[] = [];
const replicas: { name: string; app: TestApp; tlsUrl: string }[] = [];

async function sql<T>(text: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    return (await client.query(text, params)).rows as T[];
  } finally {
    await client.end();
  }
}

/** Which replica's /metrics says it records the cluster, if one does. */
async function leader(): Promise<(typeof replicas)[number] | undefined> {
  for (const r of replicas) {
    const metrics = await fetch(`${r.app.url}/metrics`)
      .then((res) => res.text())
      .catch(() => "");
    if (new RegExp(`^churnscope_recorder_leader\\{cluster="${CLUSTER}"\\} 1$`, "m").test(metrics)) return r;
  }
  return undefined;
}

async function until<T>(what: string, check: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

async function startReplica(name: string, kubeconfig: string, tls: { certFile: string; keyFile: string }, tlsPort: number) {
  const config = writeConfig(
    [
      `server:`,
      `  tls: { port: ${tlsPort}, certFile: ${tls.certFile}, keyFile: ${tls.keyFile} }`,
      `audit:`,
      `  webhookToken: { env: AUDIT_TOKEN }`,
      `clusters: [{ name: ${CLUSTER}, kubeconfig: ${kubeconfig} }]`,
    ].join("\n"),
  );
  const app = await startApp({ CHURNSCOPE_CONFIG: config, AUDIT_TOKEN: TOKEN, CHURNSCOPE_DATABASE_URL: databaseUrl });
  replicas.push({ name, app, tlsUrl: `https://127.0.0.1:${tlsPort}` });
}

beforeAll(async () => {
  db = await startPostgres();
  databaseUrl = await db.database("replicas");
  const tls = selfSignedCert(mkdtempSync(join(tmpdir(), "churnscope-tls-")));
  const tlsPorts = [await freePort(), await freePort()];
  // Every other batch held: the next one, sent to the other replica, overtakes it.
  proxy = await startDelayingProxy(
    tlsPorts.map((port) => `https://127.0.0.1:${port}`),
    tls,
    800,
  );
  cp = await startControlPlane({ users: CONTROLLER_USERS, webhook: { url: `${proxy.url}/api/audit/webhook/${CLUSTER}`, token: TOKEN, caFile: tls.certFile } });
  const kubeconfig = join(mkdtempSync(join(tmpdir(), "churnscope-kubeconfig-")), "config");
  writeFileSync(kubeconfig, cp.kubeConfig().exportConfig());
  await startReplica("a", kubeconfig, tls, tlsPorts[0]);
  await startReplica("b", kubeconfig, tls, tlsPorts[1]);
  const uids = await createNamespaces(cp.kubeConfig(), [PROJECT_NAMESPACE, ROUTE_NAMESPACE]);
  hubNamespace = `ns-${uids[PROJECT_NAMESPACE]}`;
  await createNamespaces(cp.kubeConfig(), [hubNamespace]);
}, 240_000);

afterAll(async () => {
  for (const r of replicas) await r.app.stop();
  await proxy?.stop();
  await cp?.stop();
  await db?.stop();
});

/** Each object's versions as the server made them (a no-op answers the version it had), from its audit log. */
function versionsMade(fromMs: number): Map<string, ServerWrite[]> {
  const versions = new Map<string, ServerWrite[]>();
  for (const w of serverWrites(cp.auditLogPath)) {
    if (!KIND_OF[w.resource] || w.stageMs <= fromMs) continue;
    const id = `${KIND_OF[w.resource]}/${w.namespace}/${w.name}`;
    const list = versions.get(id) ?? [];
    if (w.verb === "delete" || list.at(-1)?.resourceVersion !== w.resourceVersion) list.push(w);
    versions.set(id, list);
  }
  return versions;
}

describe("two replicas on one PostgreSQL database", () => {
  it("record the cluster once between them, and count every write the webhook posted to either exactly", async () => {
    const first = await until("a replica to record the cluster", leader);
    await sleep(6_000); // a renewal or two: the other replica does not take over a held lease
    expect((await leader())?.name).toBe(first.name);
    const fromMs = Date.now();
    await connectorChurn(cp, ledger, { prefix: "spread", hubNamespace, ticks: 5 });
    await periodicStatusPatches(cp, ledger, { rounds: 3, pauseMs: 200 });
    const toMs = Date.now();
    await sleep(3_000); // the webhook's last batches (sent within a second, some held)
    for (const r of replicas) await spoolDrained(r.app.url, 60_000);
    // Batches reached both replicas, and some after a later one.
    expect(
      [...proxy.stats.byTarget.values()].every((n) => n > 0),
      JSON.stringify([...proxy.stats.byTarget]),
    ).toBe(true);
    expect(proxy.stats.overtaken).toBeGreaterThan(0);

    // Every write request the server completed in (from, to], refused ones too, by when it was received.
    const truth = serverWrites(cp.auditLogPath, { includeFailed: true }).filter((w) => w.receivedMs > fromMs && w.receivedMs <= toMs);
    const range = `from=${new Date(fromMs).toISOString()}&to=${new Date(toMs).toISOString()}&cluster=${CLUSTER}`;
    const answers = await Promise.all(replicas.map(async (r) => (await (await fetch(`${r.app.url}/api/clients?${range}`)).json()).data));
    // Both replicas give the same answer, and it is the server's record: every write once, by each client.
    expect(answers[1]).toEqual(answers[0]);
    const byClient = new Map<string, number>();
    for (const w of truth) byClient.set(w.user, (byClient.get(w.user) ?? 0) + 1);
    const answered = new Map<string, number>();
    for (const c of answers[0].clients as { user: string; writes: number }[]) answered.set(c.user, (answered.get(c.user) ?? 0) + c.writes);
    expect(new Map([...answered].sort())).toEqual(new Map([...byClient].sort()));
    // Each request once in the store, however many replicas or retries carried it.
    const [{ n, distinct }] = await sql<{ n: string; distinct: string }>(
      "SELECT COUNT(*) AS n, COUNT(DISTINCT request_key) AS distinct FROM audit_requests WHERE ts_ms > $1",
      [fromMs],
    );
    expect(Number(n)).toBe(Number(distinct));
  }, 180_000);

  it("when the recording replica is killed, the other takes the cluster over within 30 s: every version the server made is stored or inside a gap, none twice", async () => {
    const fromMs = Date.now();
    const killed = await until("a replica to record the cluster", leader);
    const survivor = replicas.find((r) => r !== killed)!;
    // The controllers go on writing the whole time: before, while nobody records, and after the takeover.
    let taken = false;
    const churning = (async () => {
      for (let round = 0; !taken; round++) await connectorChurn(cp, ledger, { prefix: `takeover-${round}`, hubNamespace, ticks: 4, connectors: 2 });
    })();
    await sleep(1_500);
    // As a node's loss or an OOM kill would: no clean stop, no lease given up. The Service stops sending it batches.
    process.kill(-killed.app.running.child.pid!, "SIGKILL");
    const killedMs = Date.now();
    proxy.target = survivor.tlsUrl;
    await until("the other replica to take the cluster over", async () => (await leader())?.name === survivor.name, 45_000);
    const takeoverSeconds = (Date.now() - killedMs) / 1000;
    expect(takeoverSeconds).toBeLessThanOrEqual(30);
    taken = true;
    await churning;
    await connectorChurn(cp, ledger, { prefix: "after-takeover", hubNamespace, ticks: 3, connectors: 1 });
    const made = versionsMade(fromMs);
    const last = [...made.values()]
      .flat()
      .sort((x, y) => x.stageMs - y.stageMs)
      .at(-1)!;
    type Row = { kind: string; namespace: string; name: string; rv: string | null; source: string };
    const rows = () =>
      sql<Row>("SELECT o.kind, o.namespace, o.name, w.rv, w.source FROM writes w JOIN objects o ON o.id = w.object_id WHERE w.ts_ms > $1", [fromMs - 60_000]);
    await until("the last write to be stored", async () => (await rows()).some((r) => r.rv === last.resourceVersion), 60_000);
    const stored = await rows();
    const gaps = await sql<{ from_ms: string; to_ms: string | null; reason: string }>("SELECT from_ms, to_ms, reason FROM gaps WHERE cluster = $1", [CLUSTER]);
    const inGap = (ms: number) => gaps.some((g) => Number(g.from_ms) <= ms && ms <= (g.to_ms === null ? Infinity : Number(g.to_ms)));
    expect(gaps.some((g) => g.reason.includes("another replica took over"))).toBe(true);
    let missing = 0;
    for (const [id, versions] of made) {
      const mine = stored.filter((r) => `${r.kind}/${r.namespace}/${r.name}` === id && r.rv !== null);
      const rvs = mine.map((r) => (r.rv!.startsWith("deleted@") ? "deleted" : r.rv!));
      expect(new Set(rvs).size, `${id}: a version stored twice: ${rvs.join(" ")}`).toBe(rvs.length);
      // What the recorders saw (the audit webhook stores every write too, so the watched rows alone show a gap).
      const watched = mine.filter((r) => r.source === "watch").map((r) => (r.rv!.startsWith("deleted@") ? "deleted" : r.rv!));
      for (const w of versions) {
        if (watched.includes(w.verb === "delete" ? "deleted" : w.resourceVersion)) continue;
        missing++;
        expect(inGap(w.stageMs), `${id}@${w.resourceVersion} (${w.verb}) neither stored nor inside a gap ${JSON.stringify(gaps)}`).toBe(true);
      }
    }
    // Some versions were made while nobody recorded: the relist collapsed them, inside the takeover's gap.
    expect(missing).toBeGreaterThan(0);
    console.log(`kube-replicas: takeover in ${takeoverSeconds.toFixed(1)} s; ${missing} versions inside the takeover gap, the rest stored`);
  }, 240_000);

  it("while PostgreSQL is down, answers 503 saying so and reports not ready; nothing stored is lost, and recording goes on once it is back", async () => {
    const survivor = replicas.find((r) => r.app.running.child.exitCode === null && r.app.running.child.signalCode === null)!;
    const [{ n: before }] = await sql<{ n: string }>("SELECT COUNT(*) AS n FROM writes");
    const statuses: { status: number; errorType?: string; error?: string }[] = [];
    let ready: number | undefined;
    let down = true;
    const asking = (async () => {
      while (down) {
        const res = await fetch(`${survivor.app.url}/api/objects?from=now-1h&to=now`);
        const body = (await res.json().catch(() => ({}))) as { errorType?: string; error?: string };
        statuses.push({ status: res.status, errorType: body.errorType, error: body.error });
        if (res.status === 503 && ready === undefined) ready = (await fetch(`${survivor.app.url}/readyz`)).status;
        await sleep(50);
      }
    })();
    await db.crashAndRestart();
    await sleep(500);
    down = false;
    await asking;
    // While it was down: a 503 with the reason, never a 500; and the replica said it was not ready.
    expect(statuses.some((s) => s.status === 503 && s.errorType === "store_unavailable" && /database cannot be reached/.test(s.error ?? ""))).toBe(true);
    expect(statuses.filter((s) => s.status >= 500 && s.status !== 503)).toEqual([]);
    expect(ready).toBe(503);
    // Back: ready again, everything stored before is there, and new writes are recorded.
    await until("the replica to be ready again", async () => (await fetch(`${survivor.app.url}/readyz`)).status === 200, 60_000);
    const [{ n: after }] = await sql<{ n: string }>("SELECT COUNT(*) AS n FROM writes");
    expect(Number(after)).toBeGreaterThanOrEqual(Number(before));
    const fromMs = Date.now();
    await connectorChurn(cp, ledger, { prefix: "after-restart", hubNamespace, ticks: 2, connectors: 1 });
    const made = [...versionsMade(fromMs).values()].flat();
    const lastRv = made.sort((x, y) => x.stageMs - y.stageMs).at(-1)!.resourceVersion;
    await until(
      "a write after the restart to be recorded",
      async () => (await sql<{ n: string }>("SELECT COUNT(*) AS n FROM writes WHERE rv = $1 AND source = 'watch'", [lastRv]))[0].n === "1",
      90_000,
    );
  }, 240_000);
});
