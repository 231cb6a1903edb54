/**
 * The unbounded-net write-up's measurement, on a real control plane: a controller and 30 node agents on real client-go
 * informers (test/kube/apiload), each agent with its own service account, run as v0.8.0 (agents watch six kinds with
 * client-go's watch timeout, the controller updates every SiteNodeSlice unconditionally, and at one moment every
 * agent lists SiteNodeSlices from etcd at once) for one minute, then as v0.9.0 (three kinds, the timeout doubled,
 * unchanged updates skipped) for the next. The agents' FlowSchema sends them to a priority level with a few seats that
 * rejects past them. The API server's audit log (every request at Metadata level) reaches Churnscope through its
 * webhook and, separately, through `npm run ingest`; a real Prometheus scrapes the API server and each component's
 * client-go metrics. Every figure of the API cost view must equal an independent reading of the audit log, and
 * client-go's own counts must agree with it.
 */
import { copyFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiCostAnswer, CostWindow } from "@/lib/wire/api-cost";
import { ingestInto, startApp, writeConfig, type TestApp } from "../helpers/app";
import { readsPolicyFile, setUpApiLoad } from "../helpers/apiload";
import { count, truthCalls, type TruthCall } from "../helpers/api-call-truth";
import { kubeconfigFile, selfSignedCert, startControlPlane, type ControlPlane } from "../helpers/control-plane";
import { freePort, type Running } from "../helpers/processes";
import { startScrapingPrometheus, type TestPrometheus } from "../helpers/prometheus";

const TOKEN = "api-cost-webhook-token";
const CLUSTER = "canary";
const AGENTS = 30;
const NODE = "unbounded-net-node";
const CONTROLLER = "unbounded-net-controller";
const PHASE_SECONDS = 48;
const STORM_AT = 30;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const nextMinute = () => Math.ceil((Date.now() + 1) / 60_000) * 60_000;

let cp: ControlPlane;
let app: TestApp;
let fromLog: TestApp;
let prom: TestPrometheus;
let calls: TruthCall[];
const ports = { node: 0, controller: 0 };
const windows: { before: CostWindow; after: CostWindow } = { before: { startMs: 0, endMs: 0 }, after: { startMs: 0, endMs: 0 } };

/** Runs both components at one version, from a minute's start: resolves when both have exited. */
async function phase(load: Awaited<ReturnType<typeof setUpApiLoad>>, version: "v1" | "v2"): Promise<number> {
  const startMs = nextMinute();
  await sleep(startMs - Date.now());
  const running: Running[] = [
    load.phase({ role: "agents", version, seconds: PHASE_SECONDS, metricsPort: ports.node, stormAt: STORM_AT, watchScale: 1 / 60 }),
    load.phase({ role: "controller", version, seconds: PHASE_SECONDS, metricsPort: ports.controller, watchScale: 1 / 60 }),
  ];
  await Promise.all(running.map((r) => new Promise((resolve) => (r.child.exitCode !== null ? resolve(null) : r.child.once("exit", resolve)))));
  for (const r of running) if (r.child.exitCode !== 0) throw new Error(`apiload ${version} failed:\n${r.output()}`);
  return startMs;
}

async function costOf(base: string, params: Record<string, string | number>): Promise<ApiCostAnswer> {
  const res = await fetch(`${base}/api/clients/calls?${new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]))}`);
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.data;
}

beforeAll(async () => {
  const [appPort, tlsPort, promPort] = [await freePort(), await freePort(), await freePort()];
  [ports.node, ports.controller] = [await freePort(), await freePort()];
  const tls = selfSignedCert(mkdtempSync(join(tmpdir(), "churnscope-tls-")));
  cp = await startControlPlane({
    auditPolicy: readsPolicyFile(),
    webhook: { url: `https://127.0.0.1:${tlsPort}/api/audit/webhook/${CLUSTER}`, token: TOKEN, caFile: tls.certFile },
  });
  const kubeconfig = kubeconfigFile(cp.url, cp.adminToken);
  app = await startApp({
    CHURNSCOPE_CONFIG: writeConfig(
      [
        `server:`,
        `  tls: { port: ${tlsPort}, certFile: ${tls.certFile}, keyFile: ${tls.keyFile} }`,
        `prometheus:`,
        `  url: http://127.0.0.1:${promPort}`,
        `  scrapeIntervalSeconds: 1`,
        `  cacheSeconds: 0`,
        `apiservers:`,
        `  project: [kube-apiserver]`,
        `clusters: [{ name: ${CLUSTER}, kubeconfig: ${kubeconfig} }]`,
        `audit:`,
        `  webhookToken: { env: AUDIT_TOKEN }`,
      ].join("\n"),
    ),
    AUDIT_TOKEN: TOKEN,
    PORT: String(appPort),
  });
  prom = await startScrapingPrometheus(
    [
      { job: "kube-apiserver", url: cp.url, token: cp.adminToken },
      { job: NODE, url: `http://127.0.0.1:${ports.node}` },
      { job: CONTROLLER, url: `http://127.0.0.1:${ports.controller}` },
    ],
    { port: promPort },
  );
  // The agents' priority level: four shares of the API server's seats, none borrowed.
  const load = await setUpApiLoad(cp, AGENTS, 4);
  // The recorder has the agents' FlowSchema before the first call is counted.
  const deadline = Date.now() + 60_000;
  while (
    !(await (await fetch(`${app.url}/metrics`)).text()).includes(
      `churnscope_recorder_watching{cluster="${CLUSTER}",resource="flowschemas.flowcontrol.apiserver.k8s.io"} 1`,
    )
  ) {
    if (Date.now() > deadline) throw new Error(`the recorder did not watch FlowSchemas:\n${app.running.output().slice(-3000)}`);
    await sleep(200);
  }
  await sleep(2_000);
  windows.before.startMs = await phase(load, "v1");
  windows.after.startMs = windows.before.endMs = await phase(load, "v2");
  windows.after.endMs = nextMinute();
  await sleep(Math.max(6_000, windows.after.endMs - Date.now() + 2_000)); // the webhook's last batches, and the last scrapes
  const logCopy = join(mkdtempSync(join(tmpdir(), "churnscope-api-cost-log-")), "audit.log");
  copyFileSync(cp.auditLogPath, logCopy);
  calls = truthCalls(logCopy, (ua) => ua.startsWith(`${NODE}/`) || ua.startsWith(`${CONTROLLER}/`));
  const ingested = ingestInto(logCopy, CLUSTER);
  fromLog = await startApp({ CHURNSCOPE_DATA_DIR: ingested.dataDir, CHURNSCOPE_CONFIG: writeConfig("") });
}, 420_000);

afterAll(async () => {
  await fromLog?.stop();
  await app?.stop();
  await prom?.stop();
  await cp?.stop();
});

const inWindow = (w: CostWindow) => (c: TruthCall) => c.minuteMs >= w.startMs && c.minuteMs < w.endMs;
const pct = (before: number, after: number) => (before === 0 ? (after === 0 ? 0 : null) : ((after - before) / before) * 100);
const started = (c: TruthCall) => c.verb === "watch" && c.code >= 200 && c.code < 300;

/** The truth's figures of one component in one window, by the definitions the page states. */
function truthOf(agent: string, w: CostWindow) {
  const mine = calls.filter((c) => c.agent === agent && inWindow(w)(c));
  const watchers = new Set(mine.filter(started).map((c) => `${c.user}|${c.version}|${c.resource}`));
  const starts = count(mine, started);
  const byTarget: Record<string, number> = {};
  const byVerb: Record<string, number> = {};
  for (const c of mine) {
    byTarget[c.resource] = (byTarget[c.resource] ?? 0) + 1;
    byVerb[c.verb] = (byVerb[c.verb] ?? 0) + 1;
  }
  return {
    calls: mine.length,
    byTarget,
    byVerb,
    cache: count(mine, (c) => c.verb === "list" && c.listFromCache),
    consistent: count(mine, (c) => c.verb === "list" && !c.listFromCache),
    starts,
    reestablishments: starts - watchers.size,
  };
}

describe.each([
  ["the webhook", () => app],
  ["npm run ingest", () => fromLog],
])("the API cost of the write-up's components, counted from %s", (_source, served) => {
  it("gives each component's API calls before and after, the change in per cent, and which verbs and kinds it came from, as the audit log says", async () => {
    const answer = await costOf(served().url, {
      from: windows.before.startMs,
      to: windows.after.endMs,
      beforeFrom: windows.before.startMs,
      beforeTo: windows.before.endMs,
      afterFrom: windows.after.startMs,
      afterTo: windows.after.endMs,
    });
    expect(answer.comparison!.perHour).toBe(windows.before.endMs - windows.before.startMs !== windows.after.endMs - windows.after.startMs);
    for (const component of [NODE, CONTROLLER]) {
      const before = truthOf(component, windows.before);
      const after = truthOf(component, windows.after);
      expect(before.calls, `${component} made calls in the first phase`).toBeGreaterThan(0);
      const row = answer.comparison!.rows.find((r) => r.component === component && r.detail === "")!;
      const scale = answer.comparison!.perHour
        ? { before: 3_600_000 / (windows.before.endMs - windows.before.startMs), after: 3_600_000 / (windows.after.endMs - windows.after.startMs) }
        : { before: 1, after: 1 };
      const change = (b: number, a: number) => ({ before: b * scale.before, after: a * scale.after, changePct: pct(b * scale.before, a * scale.after) });
      expect(row.calls).toEqual(change(before.calls, after.calls));
      for (const target of new Set([...Object.keys(before.byTarget), ...Object.keys(after.byTarget)]))
        expect(row.byTarget[target], `${component} ${target}`).toEqual(change(before.byTarget[target] ?? 0, after.byTarget[target] ?? 0));
      for (const verb of new Set([...Object.keys(before.byVerb), ...Object.keys(after.byVerb)]))
        expect(row.byVerb[verb], `${component} ${verb}`).toEqual(change(before.byVerb[verb] ?? 0, after.byVerb[verb] ?? 0));
      expect(row.listsFromCache).toEqual(change(before.cache, after.cache));
      expect(row.listsConsistent).toEqual(change(before.consistent, after.consistent));
      expect(row.watchStarts).toEqual(change(before.starts, after.starts));
      expect(row.reestablishments).toEqual(change(before.reestablishments, after.reestablishments));
      expect(row.sentence.startsWith(`${component}: `)).toBe(true);
      // Each version apart: v0.8.0 only before, v0.9.0 only after.
      const versions = answer.comparison!.rows.filter((r) => r.component === component && r.detail !== "");
      expect(versions.map((r) => [r.detail, r.calls.before > 0, r.calls.after > 0])).toEqual([
        ["v0.8.0", true, false],
        ["v0.9.0", false, true],
      ]);
    }
    // The agents' three gateway watches are gone after the change.
    const agents = answer.comparison!.rows.find((r) => r.component === NODE && r.detail === "")!;
    for (const kind of ["gatewaypools", "gatewaypoolnodes", "sitegatewaypoolassignments"])
      expect(agents.byTarget[`${kind}.net.unbounded-cloud.io`].after).toBe(0);
    // And each of the 30 agents is listed one by one under its component.
    const node = answer.components.find((c) => c.component === NODE)!;
    expect(node.members.length).toBe(AGENTS);
    expect(node.members.map((m) => m.calls).reduce((a, b) => a + b, 0)).toBe(node.calls);
  });

  it("names the LIST storm: the minute every agent listed SiteNodeSlices from etcd, with how many agents and lists", async () => {
    const answer = await costOf(served().url, { from: windows.before.startMs, to: windows.after.endMs });
    const storm = calls.filter((c) => c.verb === "list" && c.resource === "sitenodeslices.net.unbounded-cloud.io" && !c.listFromCache);
    const minute = storm.reduce(
      (m, c) => (count(storm, (x) => x.minuteMs === c.minuteMs) > count(storm, (x) => x.minuteMs === m) ? c.minuteMs : m),
      storm[0].minuteMs,
    );
    const inMinute = calls.filter((c) => c.verb === "list" && c.resource === "sitenodeslices.net.unbounded-cloud.io" && c.minuteMs === minute);
    const found = answer.listStorms.find((s) => s.minuteMs === minute && s.target === "sitenodeslices.net.unbounded-cloud.io")!;
    expect(found).toBeDefined();
    expect(found.clients).toBe(new Set(inMinute.map((c) => c.user)).size);
    expect(found.clients).toBeGreaterThanOrEqual(AGENTS);
    expect(found.lists).toBe(inMinute.length);
    expect(found.consistent).toBe(count(inMinute, (c) => !c.listFromCache));
    expect(found.rejected).toBe(count(inMinute, (c) => c.code === 429));
    expect(found.components.find((c) => c.component === NODE)!.clients).toBe(new Set(inMinute.filter((c) => c.agent === NODE).map((c) => c.user)).size);
  });
});

describe("API Priority and Fairness", () => {
  it("counts each client in the FlowSchema that took it, and names the clients that were sending into a flow schema when it rejected", async () => {
    const answer = await costOf(app.url, { from: windows.before.startMs, to: windows.after.endMs });
    const agents = answer.flowSchemas.find((f) => f.flowSchema === "unbounded-net-agents")!;
    const range = inWindow({ startMs: windows.before.startMs, endMs: windows.after.endMs });
    const mine = calls.filter((c) => c.agent === NODE && range(c));
    expect(agents.priorityLevel).toBe("unbounded-net-agents");
    expect(agents.calls).toBe(mine.length);
    expect(agents.rejected).toBe(count(mine, (c) => c.code === 429));
    expect(agents.rejected).toBeGreaterThan(0);
    const rejectingMinutes = new Set(mine.filter((c) => c.code === 429).map((c) => c.minuteMs));
    expect(agents.rejectingMinutes).toBe(rejectingMinutes.size);
    // The clients named are the agents that sent into it in those minutes, most rejected first.
    const sending = mine.filter((c) => rejectingMinutes.has(c.minuteMs));
    const top = agents.clients[0];
    const user = top.client.split(" · ")[0];
    expect(top.component).toBe(NODE);
    expect(top.rejected).toBe(count(sending, (c) => c.user === user && c.code === 429));
    expect(top.rejected).toBe(Math.max(...[...new Set(sending.map((c) => c.user))].map((u) => count(sending, (c) => c.user === u && c.code === 429))));
    // The controller's service account is not in the agents' group: Kubernetes' suggested service-accounts schema takes it.
    const controller = answer.flowSchemas.find((f) => f.clients.some((c) => c.component === CONTROLLER))!;
    expect(controller.flowSchema).toBe("service-accounts");
    expect(controller.rejected).toBe(0);
  });

  it("client-go's own count of each component's calls agrees with the audit log's, within one scrape", async () => {
    for (const [job, agent] of [
      [NODE, NODE],
      [CONTROLLER, CONTROLLER],
    ])
      for (const w of [windows.before, windows.after]) {
        const seconds = Math.round((w.endMs - w.startMs) / 1000);
        const query = `sum(max_over_time(rest_client_requests_total{job="${job}"}[${seconds}s]))`;
        const res = await fetch(`${prom.url}/api/v1/query?${new URLSearchParams({ query, time: String(w.endMs / 1000) })}`);
        const counted = Number((await res.json()).data.result[0]?.value[1] ?? 0);
        const mine = calls.filter((c) => c.agent === agent && inWindow(w)(c));
        // What one scrape interval (1 s) can hold: the most calls the component made in any one second.
        const perSecond = new Map<number, number>();
        for (const c of mine) perSecond.set(Math.floor(c.receivedMs / 1000), (perSecond.get(Math.floor(c.receivedMs / 1000)) ?? 0) + 1);
        expect(Math.abs(counted - mine.length), `${job}: client-go ${counted}, audit log ${mine.length}`).toBeLessThanOrEqual(Math.max(...perSecond.values()));
        // The page's own table of client-go's counts says the same.
        const res2 = await fetch(`${app.url}/api/panels/client-request-totals?from=${w.startMs}&to=${w.endMs}`);
        const panel = (await res2.json()).data as { series: { labels: Record<string, string>; points: [number, number | null][] }[] };
        const shown = panel.series.filter((s) => s.labels.job === job).reduce((sum, s) => sum + (s.points.at(-1)?.[1] ?? 0), 0);
        expect(Math.abs(shown - mine.length), `${job}: shown ${shown}, audit log ${mine.length}`).toBeLessThanOrEqual(Math.max(...perSecond.values()));
      }
  });
});
