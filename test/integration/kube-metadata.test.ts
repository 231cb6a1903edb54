/**
 * No-op writes from a Metadata-level audit log, on a real kube-apiserver: its policy logs every write without
 * bodies, as managed clusters log custom resources. Controllers read an object and update it with what they
 * read (client-go's Update: the version read is the precondition), most often with nothing changed, among
 * stale updates (409), status updates, merge patches (no precondition) and deletes. The API server posts its
 * webhook batches through a proxy that holds every other one (they arrive out of order), and its log file is
 * read by `npm run ingest` as well.
 *
 * Ground truth is the API server itself: what it answered each request (a changed object comes back with a new
 * resourceVersion, an unchanged one with the version sent), joined by Audit-Id to the request its log holds.
 * One API server writes each request once, at one level, so the same run has no RequestResponse log; the
 * answers the clients got are what that log's response bodies would have shown.
 */
import Database from "better-sqlite3";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Agent, fetch } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ClientsAnswer } from "@/lib/wire/clients";
import type { PickedWriteAnswer } from "@/lib/wire/objects";
import { ingestInto, startApp, writeConfig, type TestApp } from "../helpers/app";
import { metadataPolicyFile, selfSignedCert, startControlPlane, type ControlPlane, type ControlPlaneUser } from "../helpers/control-plane";
import { createNamespaces } from "../helpers/controllers";
import { startDelayingProxy, type DelayingProxy } from "../helpers/delaying-proxy";
import { freePort } from "../helpers/processes";

const TOKEN = "metadata-webhook-token";
const CLUSTER = "managed";
const NAMESPACE = "meta";
const ROUTES = ["a", "b", "c"];
const ROUNDS = 4;
const CONTROLLER: ControlPlaneUser = { name: "route-controller", token: "route-controller-token" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const insecure = new Agent({ connect: { rejectUnauthorized: false } });

type Obj = { metadata: { name: string; resourceVersion: string; labels?: Record<string, string> } } & Record<string, unknown>;

/** What the API server answered one request: its status, and the resourceVersion before and after (a change moves it). */
interface Answer {
  status: number;
  before: string;
  after: string;
}

let cp: ControlPlane;
let app: TestApp;
let webhookProxy: DelayingProxy;
let fileStoreDir = "";
let webhookStoreDir = "";
let fromLogPath = "";
let ingestOutput = "";
const answers = new Map<string, Answer>();
/** each object's version as the API server last answered it */
const current = new Map<string, string>();

async function send(method: string, path: string, body: unknown, contentType = "application/json"): Promise<Obj> {
  const res = await fetch(cp.url + path, {
    method,
    headers: { Authorization: `Bearer ${CONTROLLER.token}`, "Content-Type": contentType, "User-Agent": "route-controller/v2.0.1 (linux/amd64)" },
    body: body === undefined ? undefined : JSON.stringify(body),
    dispatcher: insecure,
  });
  const text = await res.text();
  if (method === "GET") return JSON.parse(text) as Obj;
  const auditId = res.headers.get("audit-id");
  if (!auditId) throw new Error(`no Audit-Id on ${method} ${path}`);
  const obj = res.ok ? (JSON.parse(text) as Obj) : undefined;
  // Each object by its path; a subresource's writes are its object's (they share its versions).
  const object = method === "POST" ? `${path}/${obj?.metadata.name}` : path.replace(/\/status$/, "");
  const before = current.get(object) ?? "";
  // A delete answers with the object as it was deleted; a refused write leaves the object as it was.
  const after = method === "DELETE" ? "" : (obj?.metadata.resourceVersion ?? before);
  answers.set(auditId, { status: res.status, before, after });
  if (res.ok) current.set(object, after);
  return obj as Obj;
}

const merge = "application/merge-patch+json";

/** One controller's rounds over one route: read, update with what was read (mostly unchanged), now and then a real change. */
async function routeRounds(name: string, round: number) {
  const path = `/apis/gateway.networking.k8s.io/v1/namespaces/${NAMESPACE}/httproutes/${name}`;
  const read = () => send("GET", path, undefined);
  await send("PUT", path, await read()); // unchanged
  await send("PUT", path, await read()); // unchanged
  const stale = await read();
  if (round % 2 === 0) {
    const obj = await read();
    await send("PUT", path, { ...obj, metadata: { ...obj.metadata, labels: { ...obj.metadata.labels, round: String(round) } } }); // changed
    await send("PUT", path, stale); // refused: 409
  }
  const accepted = { type: "Accepted", status: "True", reason: "Accepted", message: "", observedGeneration: 1, lastTransitionTime: "2026-12-01T00:00:00Z" };
  const status = { parents: [{ parentRef: { name: "edge" }, controllerName: "example.com/gateway", conditions: [accepted] }] };
  await send("PUT", `${path}/status`, { ...(await read()), status }); // the first round changes it, later ones do not
  if (round === 1) await send("PATCH", `${path}/status`, { status: { parents: [] } }, merge); // changed, no precondition
  await send("PUT", path, await read()); // unchanged
}

async function configMapRounds(name: string, round: number) {
  const path = `/api/v1/namespaces/${NAMESPACE}/configmaps/${name}`;
  const obj = await send("GET", path, undefined);
  await send("PUT", path, obj); // unchanged
  await send("PUT", path, { ...obj, data: { round: String(round) } }); // changed
}

interface LoggedWrite {
  auditID: string;
  key: string;
  resource: string;
  name: string;
  verb: string;
  code: number;
  precondition: string;
  stageUs: string;
}

/** The completed writes in the API server's own log, read here on their own, in the order they completed. */
function loggedWrites(): LoggedWrite[] {
  const out: LoggedWrite[] = [];
  for (const line of readFileSync(fromLogPath, "utf8").split("\n")) {
    if (line === "") continue;
    const e = JSON.parse(line);
    if (e.stage !== "ResponseComplete" || e.objectRef?.namespace !== NAMESPACE) continue;
    expect(e.level).toBe("Metadata");
    expect(e.requestObject ?? e.responseObject).toBeUndefined();
    out.push({
      auditID: e.auditID,
      key: `${e.auditID}/${e.stage}`,
      resource: e.objectRef.resource,
      name: e.objectRef.name,
      verb: e.verb,
      code: e.responseStatus?.code ?? 0,
      precondition: e.objectRef.resourceVersion ?? "",
      stageUs: e.stageTimestamp,
    });
  }
  return out.sort((a, b) => (a.stageUs < b.stageUs ? -1 : a.stageUs > b.stageUs ? 1 : 0));
}

/** Per request, what the server's answers say it did, where the preconditions in the log can tell it (else null). */
function expectedFlags(): Map<string, boolean | null> {
  const flags = new Map<string, boolean | null>();
  const writes = loggedWrites();
  const byObject = new Map<string, LoggedWrite[]>();
  for (const w of writes) {
    if (w.code < 200 || w.code > 299) continue;
    byObject.set(`${w.resource}/${w.name}`, [...(byObject.get(`${w.resource}/${w.name}`) ?? []), w]);
  }
  for (const list of byObject.values()) {
    for (const [i, w] of list.entries()) {
      const answer = answers.get(w.auditID);
      expect(answer, `a write the driver did not send: ${w.verb} ${w.name}`).toBeDefined();
      const next = list[i + 1];
      const tells = w.precondition !== "" && next !== undefined && next.precondition !== "";
      flags.set(w.key, tells ? answer!.after === answer!.before : null);
    }
  }
  return flags;
}

function storeRows(dataDir: string, sql: string): unknown[] {
  const db = new Database(join(dataDir, "churnscope.sqlite"), { readonly: true });
  try {
    return db.prepare(sql).all();
  } finally {
    db.close();
  }
}

function storedFlags(dataDir: string): Map<string, { noop: boolean | null; evidence: string | null }> {
  const rows = storeRows(dataDir, `SELECT request_key AS k, noop, evidence FROM audit_requests WHERE namespace = '${NAMESPACE}'`) as {
    k: string;
    noop: number | null;
    evidence: string | null;
  }[];
  return new Map(rows.map((r) => [r.k, { noop: r.noop === null ? null : r.noop === 1, evidence: r.evidence }]));
}

beforeAll(async () => {
  const tls = selfSignedCert(mkdtempSync(join(tmpdir(), "churnscope-tls-")));
  const policy = metadataPolicyFile();
  webhookStoreDir = mkdtempSync(join(tmpdir(), "churnscope-metadata-"));
  // Every other batch held 1.5 s: the API server posts its next batch a second later, which overtakes it.
  // Its target is set once the dashboard is up (it needs the control plane's kubeconfig): until then the API server retries.
  webhookProxy = await startDelayingProxy("https://127.0.0.1:1", tls, 1500);
  cp = await startControlPlane({
    users: [CONTROLLER],
    auditPolicy: policy,
    webhook: { url: `${webhookProxy.url}/api/audit/webhook/${CLUSTER}`, token: TOKEN, caFile: tls.certFile },
  });
  // The webhook's dashboard also records the cluster (the shipped profiles: HTTPRoutes, not ConfigMaps).
  // The dashboard's ports, chosen now that the control plane holds its own.
  const [appPort, tlsPort] = [await freePort(), await freePort()];
  const kubeconfig = join(mkdtempSync(join(tmpdir(), "churnscope-kubeconfig-")), "config");
  writeFileSync(kubeconfig, cp.kubeConfig().exportConfig());
  const config = writeConfig(
    [
      `server:`,
      `  tls: { port: ${tlsPort}, certFile: ${tls.certFile}, keyFile: ${tls.keyFile} }`,
      `clusters: [{ name: ${CLUSTER}, kubeconfig: ${kubeconfig} }]`,
      `audit:`,
      `  webhookToken: { env: AUDIT_TOKEN }`,
    ].join("\n"),
  );
  app = await startApp({ CHURNSCOPE_CONFIG: config, CHURNSCOPE_DATA_DIR: webhookStoreDir, AUDIT_TOKEN: TOKEN, PORT: String(appPort) });
  webhookProxy.target = `https://127.0.0.1:${tlsPort}`;
  await createNamespaces(cp.kubeConfig(), [NAMESPACE]);
  const deadline = Date.now() + 60_000;
  while (
    !(await (await fetch(`${app.url}/metrics`)).text()).includes(
      `churnscope_recorder_watching{cluster="${CLUSTER}",resource="httproutes.gateway.networking.k8s.io"} 1`,
    )
  ) {
    if (Date.now() > deadline) throw new Error(`the recorder did not start watching:\n${app.running.output().slice(-3000)}`);
    await sleep(200);
  }
  for (const name of ROUTES) {
    const spec = { parentRefs: [{ name: "edge" }], hostnames: [`${name}.example.com`], rules: [{ backendRefs: [{ name, port: 8080 }] }] };
    await send("POST", `/apis/gateway.networking.k8s.io/v1/namespaces/${NAMESPACE}/httproutes`, {
      apiVersion: "gateway.networking.k8s.io/v1",
      kind: "HTTPRoute",
      metadata: { name },
      spec,
    });
  }
  await send("POST", `/api/v1/namespaces/${NAMESPACE}/configmaps`, { metadata: { name: "settings" }, data: {} });
  for (let round = 0; round < ROUNDS; round++) {
    await Promise.all([...ROUTES.map((name) => routeRounds(name, round)), configMapRounds("settings", round)]);
    await sleep(700); // batches of about a second: the proxy holds every other one
  }
  const last = `/apis/gateway.networking.k8s.io/v1/namespaces/${NAMESPACE}/httproutes/${ROUTES[0]}`;
  await send("DELETE", last, undefined);
  await sleep(4000); // the webhook's last batches (each sent within 1 s, some held 1.5 s)
  fromLogPath = join(mkdtempSync(join(tmpdir(), "churnscope-metadata-log-")), "audit.log");
  copyFileSync(cp.auditLogPath, fromLogPath);
  const fromFile = ingestInto(fromLogPath, CLUSTER);
  fileStoreDir = fromFile.dataDir;
  ingestOutput = fromFile.output;
}, 240_000);

afterAll(async () => {
  await app?.stop();
  await cp?.stop();
  await webhookProxy?.stop();
});

describe("a Metadata-level audit log of a real API server", () => {
  it("holds each update's precondition in objectRef.resourceVersion, and no bodies", () => {
    const writes = loggedWrites();
    const updates = writes.filter((w) => w.verb === "update");
    expect(updates.length).toBeGreaterThan(40);
    // Every update sent the version it read, and the log holds that version as its precondition.
    for (const w of updates) {
      const answer = answers.get(w.auditID)!;
      if (answer.status === 409) expect(w.precondition, `a stale update of ${w.name}`).not.toBe(answer.before);
      else expect(w.precondition, `an update of ${w.name}`).toBe(answer.before);
    }
    expect(writes.filter((w) => w.verb === "patch").every((w) => w.precondition === "")).toBe(true);
    expect(writes.filter((w) => w.code === 409).length).toBe(ROUTES.length * (ROUNDS / 2));
    // Every other write was taken (the status updates too): failures are the stale updates only.
    expect(writes.filter((w) => w.code >= 300 && w.code !== 409).map((w) => `${w.verb} ${w.name} ${w.code}`)).toEqual([]);
  });

  it("the webhook (batches out of order) and the log file flag exactly the writes the server left unchanged, and the ones it changed, where the preconditions tell", async () => {
    expect(webhookProxy.stats.overtaken).toBeGreaterThan(0);
    const expected = expectedFlags();
    const routeKeys = new Set(
      loggedWrites()
        .filter((w) => w.resource === "httproutes")
        .map((w) => w.key),
    );
    const told = [...expected.values()].filter((v) => v !== null);
    expect(told.filter((v) => v).length).toBeGreaterThan(20);
    expect(told.filter((v) => !v).length).toBeGreaterThan(5);
    // The webhook's store, once its last batch is in.
    let webhook = storedFlags(webhookStoreDir);
    for (let i = 0; i < 50 && webhook.size < loggedWrites().length; i++) {
      await sleep(200);
      webhook = storedFlags(webhookStoreDir);
    }
    for (const [source, stored] of [
      ["webhook", webhook],
      ["file", storedFlags(fileStoreDir)],
    ] as const) {
      for (const [key, noop] of expected) {
        const flag = stored.get(key);
        expect(flag?.noop, `${source} ${key}`).toBe(noop);
        // Beside the recorder, a route's change rests on the version the watch saw it make.
        const watched = source === "webhook" && routeKeys.has(key);
        expect(flag?.evidence, `${source} ${key}`).toBe(
          noop === null ? null : noop ? "same-precondition" : watched ? "watched-successor" : "precondition-moved",
        );
      }
    }
    // The summary counts the routes' object writes (ConfigMaps are no profiled kind: their requests only).
    const routeNoops = loggedWrites().filter((w) => w.resource === "httproutes" && expected.get(w.key) === true).length;
    expect(ingestOutput).toContain(`${routeNoops} no-op`);
  });

  it("beside the recorder, each create, delete and changed update is one row with the version the watch saw; a patch, which names no version, is a row beside it", () => {
    const routeWrites = loggedWrites().filter((w) => w.resource === "httproutes" && w.code >= 200 && w.code <= 299);
    const changedPatches = routeWrites.filter((w) => w.verb === "patch" && answers.get(w.auditID)!.after !== answers.get(w.auditID)!.before).length;
    expect(changedPatches).toBe(ROUTES.length);
    const db = new Database(join(webhookStoreDir, "churnscope.sqlite"), { readonly: true });
    try {
      const rows = db
        .prepare(
          "SELECT w.source, w.verb, w.request_key AS requestKey FROM writes w JOIN objects o ON o.id = w.object_id WHERE o.namespace = ? AND o.kind = 'HTTPRoute'",
        )
        .all(NAMESPACE) as { source: string; verb: string | null; requestKey: string | null }[];
      expect(rows.length).toBe(routeWrites.length + changedPatches);
      // The versions no request joined are exactly the patches' ones.
      expect(rows.filter((r) => r.verb === null).length).toBe(changedPatches);
      const byKey = new Map(rows.map((r) => [r.requestKey, r]));
      for (const w of routeWrites) {
        const answer = answers.get(w.auditID)!;
        const joined = w.verb === "create" || w.verb === "delete" || (w.verb === "update" && answer.after !== answer.before);
        expect(byKey.get(w.key)?.source, `${w.verb} ${w.name} ${w.precondition}`).toBe(joined ? "watch" : "audit");
      }
    } finally {
      db.close();
    }
  });

  it("Objects counts the no-op updates of each route, and Clients what each count rests on", async () => {
    const expected = expectedFlags();
    const logged = loggedWrites();
    const range = `from=${new Date(Date.now() - 600_000).toISOString()}&to=${new Date().toISOString()}`;
    const objects = (await (await fetch(`${app.url}/api/objects?${range}&kind=HTTPRoute&pageSize=50`)).json()) as {
      data: { rows: { name: string; noop: number }[] };
    };
    for (const name of ROUTES) {
      const noop = logged.filter((w) => w.resource === "httproutes" && w.name === name && expected.get(w.key) === true).length;
      const row = objects.data.rows.find((r) => r.name === name);
      // On a mismatch, the route's rows whose class and request disagree (or a no-op request with no row) say which write went where.
      const stored = () =>
        JSON.stringify(
          storeRows(
            webhookStoreDir,
            `SELECT w.id, w.ts_ms, w.class, w.source, w.verb, w.subresource, w.rv, w.prev_rv, a.precondition, a.order_us, a.noop, a.evidence FROM writes w
             JOIN objects o ON o.id = w.object_id LEFT JOIN audit_requests a ON a.request_key = w.request_key
             WHERE o.kind = 'HTTPRoute' AND o.name = '${name}' AND (w.class = 'no-op') <> COALESCE(a.noop = 1, FALSE)
             UNION ALL SELECT NULL, a.ts_ms, NULL, 'no row', a.verb, a.subresource, NULL, NULL, a.precondition, a.order_us, a.noop, a.evidence FROM audit_requests a
             WHERE a.resource = 'httproutes' AND a.name = '${name}' AND a.noop = 1 AND NOT EXISTS (SELECT 1 FROM writes w WHERE w.request_key = a.request_key)`,
          ),
        );
      expect(row?.noop, `${name} (Objects ${row?.noop}, the log ${noop}): ${row?.noop === noop ? "" : stored()}`).toBe(noop);
    }
    // A no-op's write, picked on its timeline, says what its class rests on.
    const noopWrite = storeRows(
      webhookStoreDir,
      "SELECT w.id AS seq, o.name FROM writes w JOIN objects o ON o.id = w.object_id WHERE o.kind = 'HTTPRoute' AND w.class = 'no-op' LIMIT 1",
    )[0] as { seq: number; name: string };
    const picked = (await (
      await fetch(`${app.url}/api/objects/${CLUSTER}/gateway.networking.k8s.io/HTTPRoute/${NAMESPACE}/${noopWrite.name}/write?${range}&seq=${noopWrite.seq}`)
    ).json()) as { data: PickedWriteAnswer };
    expect(picked.data.audited).toEqual({ noop: true, evidence: "same-precondition" });
    const clients = ((await (await fetch(`${app.url}/api/clients?${range}`)).json()) as { data: ClientsAnswer }).data;
    const noop = [...expected.values()].filter((v) => v === true).length;
    const changed = [...expected.values()].filter((v) => v === false).length;
    expect(clients.clients.find((c) => c.user === CONTROLLER.name)).toMatchObject({ noop, changed });
    // For the routes alone (the API server renews its own Leases with preconditions too).
    const routes = ((await (await fetch(`${app.url}/api/clients?${range}&resource=httproutes.gateway.networking.k8s.io`)).json()) as { data: ClientsAnswer })
      .data;
    const ofRoutes = logged.filter((w) => w.resource === "httproutes").map((w) => expected.get(w.key));
    expect(routes.evidence).toEqual([
      { evidence: "same-precondition", noop: ofRoutes.filter((v) => v === true).length, changed: 0 },
      // The recorder watches the routes: a change rests on the version the watch saw it make.
      { evidence: "watched-successor", noop: 0, changed: ofRoutes.filter((v) => v === false).length },
    ]);
    expect(routes.unknown).toBe(
      logged.filter((w) => w.resource === "httproutes" && ["update", "patch"].includes(w.verb) && expected.get(w.key) === null).length,
    );
  });
});
