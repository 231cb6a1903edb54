/**
 * One write, one row, on a real kube-apiserver: the dashboard records ConfigMaps (a profile from the config file
 * that ignores a heartbeat annotation) and HTTPRoutes (the shipped profile, which ignores lastTransitionTime)
 * with its recorder, and takes the API server's audit webhook over https, in both arrival orders, made on
 * purpose: first with the webhook held back (the watch comes first), then with the watch held back (the webhook
 * comes first). A driver sends creates, routed and unrouted writes, writes that change only ignored paths,
 * identical writes (the same resourceVersion back), refused updates (409), dry runs and deletes, and notes each
 * request's Audit-Id and what it meant to do. Ground truth is the API server's own audit log: every completed
 * write it holds, joined to that intent by its Audit-Id.
 */
import Database from "better-sqlite3";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { serverWrites } from "../helpers/audit-truth";
import { kubeconfigFile, selfSignedCert, startControlPlane, type ControlPlane, type ControlPlaneUser } from "../helpers/control-plane";
import { createNamespaces } from "../helpers/controllers";
import { startDelayingProxy, type DelayingProxy } from "../helpers/delaying-proxy";
import { startLateWatchProxy, type LateWatchProxy } from "../helpers/late-watch-proxy";
import { freePort } from "../helpers/processes";

const TOKEN = "one-row-webhook-token";
const CLUSTER = "kind-dev";
const NAMESPACE = "one-row";
const ROUNDS = 3;
/** How long the late side is held: longer than the webhook's batch wait (1 s) and a watch event's trip together. */
const HOLD_MS = 2_500;
const USERS: Record<"configmaps" | "httproutes", ControlPlaneUser> = {
  configmaps: { name: "config-writer", token: "config-writer-token" },
  httproutes: { name: "route-writer", token: "route-writer-token" },
};
type Intent = "create" | "routed" | "unrouted" | "no-op" | "delete" | "refused" | "dry run";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

const POLICY = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
  - level: None
    verbs: ["get", "list", "watch"]
  - level: RequestResponse
    resources:
      - group: ""
        resources: ["configmaps"]
      - group: gateway.networking.k8s.io
        resources: ["httproutes", "httproutes/status"]
  - level: Metadata
`;

let cp: ControlPlane;
let app: TestApp;
let dataDir = "";
let webhookProxy: DelayingProxy;
let watchProxy: LateWatchProxy;
/** what each request the driver sent meant to do, by its Audit-Id */
const intents = new Map<string, Intent>();
/** the order each phase's first write was stored in, read while the late side was still held */
const firstSeen: Record<string, { source: string; verb: string | null }> = {};

function store() {
  return new Database(join(dataDir, "churnscope.sqlite"), { readonly: true });
}

async function send(user: ControlPlaneUser, method: string, path: string, body: unknown, intent: Intent, contentType = "application/json") {
  const res = await fetch(cp.url + path, {
    method,
    headers: { Authorization: `Bearer ${user.token}`, "Content-Type": contentType, "User-Agent": `${user.name}/1.0.0` },
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher: insecure,
  });
  const text = await res.text();
  const auditId = res.headers.get("audit-id");
  if (!auditId) throw new Error(`no Audit-Id on ${method} ${path}`);
  intents.set(auditId, intent);
  const expected = intent === "refused" ? 409 : intent === "create" ? 201 : 200;
  expect(res.status, `${method} ${path}: ${text}`).toBe(expected);
  return JSON.parse(text) as { metadata: { resourceVersion: string } } & Record<string, unknown>;
}

const merge = "application/merge-patch+json";
const status = (at: string) => ({
  status: {
    parents: [
      {
        parentRef: { group: "gateway.networking.k8s.io", kind: "Gateway", name: "edge", namespace: "gateways" },
        controllerName: "linkerd.io/gateway-controller",
        conditions: [{ type: "Accepted", status: "True", reason: "Accepted", message: "", observedGeneration: 1, lastTransitionTime: at }],
      },
    ],
  },
});
const second = (k: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, k)).toISOString().replace(".000Z", "Z");

/** Every kind of write to one ConfigMap, from its create to its delete. */
async function configMapWrites(name: string) {
  const user = USERS.configmaps;
  const base = `/api/v1/namespaces/${NAMESPACE}/configmaps`;
  const created = await send(user, "POST", base, { metadata: { name }, data: { target: "a" } }, "create");
  await send(user, "PATCH", `${base}/${name}`, { data: { target: "b" } }, "routed", merge);
  await send(user, "PATCH", `${base}/${name}`, { data: { note: "x" } }, "unrouted", merge);
  await send(user, "PATCH", `${base}/${name}`, { metadata: { annotations: { heartbeat: "1" } } }, "no-op", merge);
  const current = await send(user, "PATCH", `${base}/${name}`, { metadata: { annotations: { heartbeat: "2" } } }, "no-op", merge);
  await send(user, "PUT", `${base}/${name}`, current, "no-op"); // the same object back: the same resourceVersion
  await send(user, "PUT", `${base}/${name}`, { ...current, metadata: { ...current.metadata, ...created.metadata }, data: { target: "c" } }, "refused");
  await send(user, "PATCH", `${base}/${name}?dryRun=All`, { data: { target: "d" } }, "dry run", merge);
  await send(user, "DELETE", `${base}/${name}`, undefined, "delete");
}

/** Every kind of write to one HTTPRoute, its status patches as Linkerd's policy controller sends them. */
async function routeWrites(name: string) {
  const user = USERS.httproutes;
  const base = `/apis/gateway.networking.k8s.io/v1/namespaces/${NAMESPACE}/httproutes`;
  const spec = { parentRefs: [{ name: "edge", namespace: "gateways" }], hostnames: [`${name}.example.com`], rules: [{ backendRefs: [{ name, port: 8080 }] }] };
  const created = await send(user, "POST", base, { apiVersion: "gateway.networking.k8s.io/v1", kind: "HTTPRoute", metadata: { name }, spec }, "create");
  await send(user, "PATCH", `${base}/${name}`, { spec: { hostnames: [`${name}.example.org`] } }, "routed", merge);
  await send(user, "PATCH", `${base}/${name}/status`, status(second(1)), "unrouted", merge);
  await send(user, "PATCH", `${base}/${name}/status`, status(second(2)), "no-op", merge); // only lastTransitionTime
  await send(user, "PATCH", `${base}/${name}/status`, status(second(3)), "no-op", merge);
  const current = await send(user, "PATCH", `${base}/${name}/status`, status(second(3)), "no-op", merge); // the same status: the same version back
  await send(user, "PUT", `${base}/${name}`, { ...current, metadata: { ...current.metadata, resourceVersion: created.metadata.resourceVersion } }, "refused");
  await send(user, "PATCH", `${base}/${name}?dryRun=All`, { metadata: { labels: { tried: "yes" } } }, "dry run", merge);
  await send(user, "DELETE", `${base}/${name}`, undefined, "delete");
}

/** The stored row of an object's create, once there is one. */
async function createRow(kind: string, name: string): Promise<{ source: string; verb: string | null }> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const db = store();
    const row = db
      .prepare("SELECT w.source, w.verb FROM writes w JOIN objects o ON o.id = w.object_id WHERE o.kind = ? AND o.name = ? AND w.class = 'create'")
      .get(kind, name) as { source: string; verb: string | null } | undefined;
    db.close();
    if (row) return row;
    await sleep(25);
  }
  throw new Error(`no create of ${kind} ${name} was stored`);
}

async function phase(label: string) {
  for (let round = 0; round < ROUNDS; round++) {
    const cm = `${label}-${round}-config`;
    const route = `${label}-${round}-route`;
    await Promise.all([configMapWrites(cm), routeWrites(route), round === 0 ? createRow("ConfigMap", cm).then((r) => (firstSeen[label] = r)) : undefined]);
  }
}

beforeAll(async () => {
  const [appPort, tlsPort] = [await freePort(), await freePort()];
  const tls = selfSignedCert(mkdtempSync(join(tmpdir(), "churnscope-tls-")));
  const policy = join(mkdtempSync(join(tmpdir(), "churnscope-policy-")), "policy.yaml");
  writeFileSync(policy, POLICY);
  const config = (kubeconfig: string) =>
    writeConfig(
      [
        `server:`,
        `  tls: { port: ${tlsPort}, certFile: ${tls.certFile}, keyFile: ${tls.keyFile} }`,
        `clusters: [{ name: ${CLUSTER}, kubeconfig: ${kubeconfig} }]`,
        `audit:`,
        `  webhookToken: { env: AUDIT_TOKEN }`,
        `profiles:`,
        `  - name: configmap`,
        `    group: ""`,
        `    version: v1`,
        `    resource: configmaps`,
        `    kind: ConfigMap`,
        `    source: { path: "$.data" }`,
        `    routed: { target: { path: "$.target" } }`,
        `    ignore: ["$.metadata.annotations.heartbeat"]`,
      ].join("\n"),
    );
  webhookProxy = await startDelayingProxy(`https://127.0.0.1:${tlsPort}`, tls, HOLD_MS);
  webhookProxy.holdEvery = 1;
  cp = await startControlPlane({
    users: Object.values(USERS),
    auditPolicy: policy,
    webhook: { url: `${webhookProxy.url}/api/audit/webhook/${CLUSTER}`, token: TOKEN, caFile: tls.certFile },
  });
  await createNamespaces(cp.kubeConfig(), [NAMESPACE]);
  watchProxy = await startLateWatchProxy(cp.url, 0);
  const kubeconfig = kubeconfigFile(watchProxy.url, cp.adminToken);
  dataDir = mkdtempSync(join(tmpdir(), "churnscope-one-row-"));
  app = await startApp({ CHURNSCOPE_CONFIG: config(kubeconfig), CHURNSCOPE_DATA_DIR: dataDir, AUDIT_TOKEN: TOKEN, PORT: String(appPort) });
  // The recorder lists both kinds before the first write.
  const deadline = Date.now() + 60_000;
  const watching = (metrics: string, resource: string) => metrics.includes(`churnscope_recorder_watching{cluster="${CLUSTER}",resource="${resource}"} 1`);
  for (;;) {
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    if (watching(metrics, "configmaps") && watching(metrics, "httproutes.gateway.networking.k8s.io")) break;
    if (Date.now() > deadline) throw new Error(`the recorder did not start watching:\n${app.running.output().slice(-3000)}`);
    await sleep(200);
  }

  await phase("watch-first"); // the webhook held HOLD_MS: every batch reaches the dashboard after the watch
  webhookProxy.holdMs = 0;
  watchProxy.holdMs = HOLD_MS;
  await sleep(HOLD_MS + 1_000); // what the watch still held has arrived
  await phase("audit-first"); // the watch held HOLD_MS: every batch comes first
  await sleep(HOLD_MS + 3_000); // the last batch and the last held watch events
}, 300_000);

afterAll(async () => {
  await app?.stop();
  await watchProxy?.stop();
  await cp?.stop();
  await webhookProxy?.stop();
});

describe("the recorder and the audit webhook together on a real API server", () => {
  it("stored each phase's first write in the order the phase meant", () => {
    // Read while the late side still held it: the watch's row without the audit's request, then the audit's row alone.
    expect(firstSeen["watch-first"]).toEqual({ source: "watch", verb: null });
    expect(firstSeen["audit-first"]).toEqual({ source: "audit", verb: "create" });
  });

  it("stores exactly the API server's writes, one row each, per object and class, in both orders", () => {
    const expected = new Map<string, number>();
    const perUser = new Map<string, { requests: number; noop: number }>();
    for (const w of serverWrites(cp.auditLogPath)) {
      if (w.namespace !== NAMESPACE || (w.resource !== "configmaps" && w.resource !== "httproutes")) continue;
      const intent = intents.get(w.auditID);
      expect(intent, `a write the driver did not send: ${w.verb} ${w.name}`).toBeDefined();
      const key = `${w.name} ${intent}`;
      expected.set(key, (expected.get(key) ?? 0) + 1);
      const user = perUser.get(w.user) ?? { requests: 0, noop: 0 };
      user.requests++;
      if (intent === "no-op") user.noop++;
      perUser.set(w.user, user);
    }
    // Every request the driver meant to be stored is in the log, and none of the refused or dry runs.
    const meant = [...intents.values()].filter((i) => i !== "refused" && i !== "dry run").length;
    expect([...expected.values()].reduce((a, b) => a + b, 0)).toBe(meant);
    expect(meant).toBe(2 * ROUNDS * 2 * 7);

    const db = store();
    const rows = db
      .prepare(
        "SELECT o.name || ' ' || w.class AS k, COUNT(*) AS n FROM writes w JOIN objects o ON o.id = w.object_id WHERE o.namespace = ? GROUP BY k ORDER BY k",
      )
      .all(NAMESPACE) as { k: string; n: number }[];
    // Every row carries the audit's request: none was stored by one side alone.
    const unjoined = db
      .prepare("SELECT COUNT(*) AS n FROM writes w JOIN objects o ON o.id = w.object_id WHERE o.namespace = ? AND (w.verb IS NULL OR w.source <> 'watch')")
      .get(NAMESPACE) as { n: number };
    const clients = db
      .prepare(
        "SELECT usr AS user, COUNT(*) AS requests, SUM(noop = 1) AS noop FROM audit_requests WHERE namespace = ? AND code BETWEEN 200 AND 299 GROUP BY usr",
      )
      .all(NAMESPACE) as { user: string; requests: number; noop: number }[];
    db.close();
    expect(Object.fromEntries(rows.map((r) => [r.k, r.n]))).toEqual(Object.fromEntries([...expected].sort(([a], [b]) => a.localeCompare(b))));
    expect(unjoined.n).toBe([...expected].filter(([k]) => k.endsWith(" no-op")).length > 0 ? sameVersionBack() : 0);
    expect(Object.fromEntries(clients.map((c) => [c.user, { requests: c.requests, noop: c.noop }]))).toEqual(Object.fromEntries(perUser));
  });
});

/** Writes answered with the version the object had: the watch never sees them, so only the audit's row holds them. */
function sameVersionBack(): number {
  const previous = new Map<string, string>();
  let n = 0;
  for (const w of serverWrites(cp.auditLogPath)) {
    if (w.namespace !== NAMESPACE || (w.resource !== "configmaps" && w.resource !== "httproutes")) continue;
    if (w.resourceVersion !== "" && previous.get(w.name) === w.resourceVersion) n++;
    if (w.resourceVersion !== "") previous.set(w.name, w.resourceVersion);
  }
  return n;
}
