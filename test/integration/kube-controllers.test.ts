/**
 * What a real controller gets wrong, on a real kube-apiserver: network-services-operator's connector controller as it
 * really behaves (test/kube/connectorctl: meta.FindStatusCondition's pointer changed in place before
 * meta.SetStatusCondition, so every Ready flip keeps its lastTransitionTime and Accepted keeps the CRD's 1970 default;
 * each status sent once more, unchanged, a moment later), against agents whose lease renewals stop on a schedule the
 * test knows. The dashboard records the cluster and takes the audit webhook at once, in three phases: the webhook held
 * (the watch first), the watch held (the webhook first), and every third webhook batch held 10 s, the API server's
 * retry interval (late batches, with echoes in between). Ground truth is the API server's own audit log, read by
 * test/helpers/count_clocks.py, and the schedule.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { spawnSync } from "node:child_process";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FlapsAnswer, TraitsAnswer } from "@/lib/wire/traits";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { kubeBinaries, kubeconfigFile, selfSignedCert, startControlPlane, type ControlPlane, type ControlPlaneUser } from "../helpers/control-plane";
import { createNamespaces } from "../helpers/controllers";
import { startDelayingProxy, type DelayingProxy } from "../helpers/delaying-proxy";
import { startLateWatchProxy, type LateWatchProxy } from "../helpers/late-watch-proxy";
import { freePort } from "../helpers/processes";
import { ROOT } from "../helpers/root";

const TOKEN = "controllers-webhook-token";
const CLUSTER = "kind-dev";
const NAMESPACE = "connectors";
const CONTROLLER: ControlPlaneUser = { name: "nso-connector", token: "nso-connector-token" };
const AGENT: ControlPlaneUser = { name: "datum-connect", token: "datum-connect-token" };
/** The controller's field manager: a write the watch saw is credited to it (the audit log names the user). */
const MANAGER = "connector-controller";
/** The writer each user's writes are credited with: the field manager the watch sees. */
const WRITER: Record<string, string> = { admin: "connector-setup", [CONTROLLER.name]: MANAGER };
/** Renewed every second, a lease lasts 5 s: a renewal would have to be 4 s late (a loaded machine) to flip Ready unplanned. */
const LEASE_S = 5;
const RUN_S = 46;
/**
 * Connectors 0–2 stop renewing twice for 8 s (offline about 4 s each time: the gap less the lease's last 4 s), connector
 * 3 once for 18 s (offline about 14 s); each spell offline begins more than the flap window after the Connector last
 * came online.
 */
const SCHEDULE = "0:14-22,34-42;1:14-22,34-42;2:14-22,34-42;3:14-32";
const CONNECTORS = 4;
const SHORT_GAPS = 6;
const LONG_GAPS = 1;
/** Flaps: undone within 10 s (the short offline spells are, the long one is not); the hold-down: offline passed after 7 s. */
const WINDOW_S = 10;
const HOLD_S = 7;
const PHASES = ["watch-first", "audit-first", "late-batches"] as const;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let cp: ControlPlane;
let app: TestApp;
let dataDir = "";
let webhookProxy: DelayingProxy;
let watchProxy: LateWatchProxy;
let startMs = 0;
let endMs = 0;

interface Truth {
  writes: Record<string, { echo: number; clockOnly: number; made: number }>;
  clocks: Record<string, [number, number]>;
  series: Record<string, [number, string][]>;
}

function truth(): Truth {
  const run = spawnSync(
    "python3",
    [join(ROOT, "test", "helpers", "count_clocks.py"), "--resource", "connectors.networking.datumapis.com", "--series", "Ready", cp.auditLogPath],
    { encoding: "utf8", maxBuffer: 256 * 1024 * 1024 },
  );
  if (run.error) throw new Error(`this test needs python3 on the PATH to read the audit log independently: ${run.error.message}`);
  if (run.status !== 0) throw new Error(`count_clocks.py failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as Truth;
}

async function api<T>(path: string, params: Record<string, string | number>): Promise<{ data: T; warnings: string[] }> {
  const search = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
  const res = await fetch(`${app.url}${path}?${search}`);
  expect(res.status, await res.clone().text()).toBe(200);
  return (await res.json()) as { data: T; warnings: string[] };
}

function runController(prefix: string): Promise<void> {
  const child = spawn(
    kubeBinaries().connectorctl,
    [
      "run",
      `-server=${cp.url}`,
      `-admin-token=${cp.adminToken}`,
      `-controller-token=${CONTROLLER.token}`,
      `-agent-token=${AGENT.token}`,
      `-namespace=${NAMESPACE}`,
      `-prefix=${prefix}`,
      `-connectors=${CONNECTORS}`,
      `-seconds=${RUN_S}`,
      `-lease=${LEASE_S}`,
      `-schedule=${SCHEDULE}`,
      "-echo",
      // The controller's first status is written before any Lease: Ready starts False and its first True is a flip.
      "-agent-delay=2",
    ],
    { stdio: ["ignore", "pipe", "pipe"] },
  );
  let output = "";
  child.stdout.on("data", (d: Buffer) => (output += d));
  child.stderr.on("data", (d: Buffer) => (output += d));
  return new Promise((resolve, reject) =>
    child.on("close", (code) => (code === 0 ? resolve() : reject(new Error(`connectorctl ${prefix} exited ${code}:\n${output.slice(-3000)}`)))),
  );
}

beforeAll(async () => {
  const [appPort, tlsPort] = [await freePort(), await freePort()];
  const tls = selfSignedCert(mkdtempSync(join(tmpdir(), "churnscope-tls-")));
  webhookProxy = await startDelayingProxy(`https://127.0.0.1:${tlsPort}`, tls, 0);
  cp = await startControlPlane({
    users: [CONTROLLER, AGENT],
    webhook: { url: `${webhookProxy.url}/api/audit/webhook/${CLUSTER}`, token: TOKEN, caFile: tls.certFile },
  });
  await createNamespaces(cp.kubeConfig(), [NAMESPACE]);
  watchProxy = await startLateWatchProxy(cp.url, 0);
  const kubeconfig = kubeconfigFile(watchProxy.url, cp.adminToken);
  const config = writeConfig(
    [
      `server:`,
      `  tls: { port: ${tlsPort}, certFile: ${tls.certFile}, keyFile: ${tls.keyFile} }`,
      `clusters: [{ name: ${CLUSTER}, kubeconfig: ${kubeconfig} }]`,
      `audit:`,
      `  webhookToken: { env: AUDIT_TOKEN }`,
    ].join("\n"),
  );
  dataDir = mkdtempSync(join(tmpdir(), "churnscope-controllers-"));
  app = await startApp({ CHURNSCOPE_CONFIG: config, CHURNSCOPE_DATA_DIR: dataDir, AUDIT_TOKEN: TOKEN, PORT: String(appPort) });
  const deadline = Date.now() + 60_000;
  const watching = (metrics: string, resource: string) => metrics.includes(`churnscope_recorder_watching{cluster="${CLUSTER}",resource="${resource}"} 1`);
  for (;;) {
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    if (watching(metrics, "connectors.networking.datumapis.com") && watching(metrics, "leases.coordination.k8s.io")) break;
    if (Date.now() > deadline) throw new Error(`the recorder did not start watching:\n${app.running.output().slice(-3000)}`);
    await sleep(200);
  }
  startMs = Date.now() - 1_000;
  // The webhook held 2.5 s: every batch reaches the dashboard after the watch saw its writes.
  Object.assign(webhookProxy, { holdMs: 2_500, holdEvery: 1 });
  await runController("wf");
  await sleep(4_000);
  // The watch held 2.5 s: every batch comes first.
  Object.assign(webhookProxy, { holdMs: 0 });
  watchProxy.holdMs = 2_500;
  await runController("af");
  await sleep(4_000);
  // Every third batch held 10 s, as when the API server retries a post that failed: its writes arrive after later ones.
  watchProxy.holdMs = 0;
  Object.assign(webhookProxy, { holdMs: 10_000, holdEvery: 3 });
  await runController("lb");
  await sleep(14_000);
  endMs = Date.now() + 1_000;
}, 400_000);

afterAll(async () => {
  await app?.stop();
  await watchProxy?.stop();
  await cp?.stop();
  await webhookProxy?.stop();
});

const scope = () => ({ from: startMs, to: endMs, cluster: CLUSTER, group: "networking.datumapis.com", kind: "Connector", namespace: NAMESPACE });

describe("a real connector controller and flapping agents on a real API server", () => {
  it("webhook batches really came late: some reached the dashboard after later ones", () => {
    expect(webhookProxy.stats.overtaken).toBeGreaterThan(0);
  });

  it("counts every frozen clock and every clock older than its object, per condition and writer, as the API server's log says, and says Ready's clock never moved", async () => {
    const t = truth();
    const expected = Object.entries(t.clocks)
      .filter(([id]) => !id.includes("|moved|"))
      .map(([id, [writes, objects]]) => {
        const [kind, conditionType, finding, user] = id.split("|");
        expect(WRITER[user], user).toBeDefined();
        return { kind, conditionType, finding, writer: WRITER[user], writes, objects };
      });
    // The schedule's own count: each Connector's first Ready=True, and each spell offline and back.
    const readyFrozen = expected.find((e) => e.conditionType === "Ready" && e.finding === "frozen");
    expect(readyFrozen?.writes).toBe(PHASES.length * (CONNECTORS + 2 * (SHORT_GAPS + LONG_GAPS)));
    expect(readyFrozen?.objects).toBe(PHASES.length * CONNECTORS);
    expect(t.clocks[`Connector|Ready|moved|${CONTROLLER.name}`]).toBeUndefined();
    // Accepted's 1970-01-01 default: created with it, and accepted by the controller without moving it.
    for (const writer of Object.values(WRITER))
      expect(expected.find((e) => e.conditionType === "Accepted" && e.finding === "predates" && e.writer === writer)?.objects, writer).toBe(
        PHASES.length * CONNECTORS,
      );

    const { data } = await api<TraitsAnswer>("/api/objects/traits", scope());
    const got = data.clocks.map(({ kind, conditionType, finding, writer, writes, objects }) => ({ kind, conditionType, finding, writer, writes, objects }));
    expect(got).toEqual(expect.arrayContaining(expected));
    expect(got).toHaveLength(expected.length);
    expect(data.sentences.join(" ")).toContain(
      `Ready changed ${readyFrozen!.writes} times on ${readyFrozen!.objects} Connectors by ${MANAGER}; its lastTransitionTime never moved`,
    );
  });

  it("stores each write once: every status change joined to the version the watch saw, every echo a no-op of its own, whatever came first", async () => {
    const t = truth();
    const controller = t.writes[CONTROLLER.name];
    expect(controller.echo).toBeGreaterThan(20);
    const { data } = await api<TraitsAnswer>("/api/objects/traits", scope());
    expect(data.writers.find((w) => w.writer === CONTROLLER.name)).toMatchObject({
      echoes: controller.echo,
      clockOnly: 0,
      ignoredOnly: 0,
      noop: controller.echo,
    });
    const db = new Database(join(dataDir, "churnscope.sqlite"), { readonly: true });
    const rows = db
      .prepare(
        `SELECT w.source, w.class, w.verb IS NOT NULL AS audited, w.traits, COUNT(*) AS n FROM writes w JOIN objects o ON o.id = w.object_id
         WHERE o.kind = 'Connector' AND o.namespace = ? GROUP BY 1, 2, 3, 4`,
      )
      .all(NAMESPACE) as { source: string; class: string; audited: number; traits: string | null; n: number }[];
    db.close();
    const count = (match: (r: (typeof rows)[number]) => boolean) => rows.filter(match).reduce((n, r) => n + r.n, 0);
    // Creates and status updates that made a version: one row each, the watch's, carrying the audit's request.
    const made = Object.values(t.writes).reduce((n, w) => n + w.made, 0);
    expect(count((r) => r.source === "watch" && r.audited === 1)).toBe(made);
    expect(count((r) => r.source === "watch" && r.audited === 0)).toBe(0);
    expect(count((r) => r.source === "audit" && r.class === "no-op" && r.traits === '["e"]')).toBe(controller.echo);
    expect(count((r) => r.source === "audit" && !(r.class === "no-op" && r.traits === '["e"]'))).toBe(0);
    expect(count((r) => r.class === "unknown")).toBe(0);
  });

  it("counts the flaps the schedule made, as the versions in the API server's log show them, and the hold-down's rebuilds and delays", async () => {
    const t = truth();
    // The independent reading: each Connector's online state over the versions the log shows, flaps within the window.
    let changes = 0;
    let flaps = 0;
    for (const series of Object.values(t.series)) {
      const states = series.map(([ms, status]) => [ms, status === "True" ? "true" : "false"] as const);
      const moves = states.filter((s, i) => i > 0 && s[1] !== states[i - 1][1]);
      changes += moves.length;
      for (let i = 1; i < moves.length; i++) if (moves[i][0] - moves[i - 1][0] <= WINDOW_S * 1000) flaps++;
    }
    expect(flaps).toBe(PHASES.length * SHORT_GAPS);
    expect(changes).toBe(PHASES.length * (CONNECTORS + 2 * (SHORT_GAPS + LONG_GAPS)));

    const { data } = await api<FlapsAnswer>("/api/objects/flaps", { ...scope(), window: WINDOW_S, holdField: "online", holdValue: "false", hold: HOLD_S });
    expect(data.flaps).toMatchObject({ changes, flaps, objectsFlapping: PHASES.length * 3 });
    expect(data.flaps.medianInStateMs).toBeGreaterThan(2_000);
    expect(data.flaps.medianInStateMs).toBeLessThan(WINDOW_S * 1000);
    // Every short spell offline is absorbed; the long one reaches the consumer HOLD_S late; coming online passes at once.
    expect(data.hold).toEqual({
      rule: { field: "online", value: "false", holdMs: HOLD_S * 1000 },
      rebuildsWithout: changes,
      rebuildsWith: PHASES.length * (CONNECTORS + 2 * LONG_GAPS),
      absorbed: PHASES.length * SHORT_GAPS,
      delayed: PHASES.length * LONG_GAPS,
      immediate: PHASES.length * (CONNECTORS + LONG_GAPS),
      stillHeld: 0,
    });
  });

  it("marks a Connector's echoes and frozen clocks on its timeline, as many as its writes hold", async () => {
    const t = truth();
    const name = "lb-0";
    const res = await fetch(
      `${app.url}/api/objects/${CLUSTER}/networking.datumapis.com/Connector/${NAMESPACE}/${name}/timeline?from=${startMs}&to=${endMs}&width=400`,
    );
    const timeline = (await res.json()).data as { marks: { echoes: number; clockFaults: number }[] };
    const echoes = timeline.marks.reduce((n, m) => n + m.echoes, 0);
    const faults = timeline.marks.reduce((n, m) => n + m.clockFaults, 0);
    const series = t.series[`${NAMESPACE}/${name}`];
    expect(echoes).toBeGreaterThan(0);
    // Every version carries a clock fault: the create and the first status Accepted's 1970 clock, every later one Ready's frozen clock.
    expect(faults).toBe(series.length);
  });
});
