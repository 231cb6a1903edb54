/**
 * Audit ingest, the audit webhook, Clients and Write load against a real kube-apiserver: the
 * controllers reproduce the three write-ups while the API server writes its audit log file, posts the
 * same events to Churnscope's webhook (over https: the API server sends its token only over TLS; through a
 * proxy that holds every other batch, so they arrive out of order), and a real Prometheus scrapes its
 * /metrics every second. The log file is also read as a container log and as kubectl prints one.
 * Ground truth is the server's own record: its audit log read by a small reader of its own, its
 * counters read straight from /metrics, and the controllers' ledger of what each write meant to do.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ingestInto, startApp, writeConfig, type TestApp } from "../helpers/app";
import { isDryRunUri, serverWrites } from "../helpers/audit-truth";
import { kubeBinaries, selfSignedCert, startControlPlane, type ControlPlane } from "../helpers/control-plane";
import {
  ACTORS,
  BIG_ROUTE,
  bigRouteWrites,
  connectorChurn,
  CONTROLLER_USERS,
  createNamespaces,
  periodicStatusPatches,
  PROJECT_NAMESPACE,
  ROUTE_NAMESPACE,
  routeNames,
  unchangedWritesThenFix,
  type LedgerEntry,
} from "../helpers/controllers";
import { startDelayingProxy, type DelayingProxy } from "../helpers/delaying-proxy";
import { freePort } from "../helpers/processes";
import { startScrapingPrometheus, type TestPrometheus } from "../helpers/prometheus";

const TOKEN = "kube-audit-webhook-token";
const JOB = "kube-apiserver";
const CLUSTER = "kind-dev";
const OURS = new Set(["connectors", "httproutes"]);
const VERB: Record<string, string> = { create: "POST", update: "PUT", patch: "PATCH", delete: "DELETE" };
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const iso = (ms: number) => new Date(ms).toISOString();

let app: TestApp;
let fromLog: TestApp;
let fromContainerLog: TestApp;
let webhookProxy: DelayingProxy;
let containerLogPath = "";
let containerIngestOutput = "";
let kubectlIngestOutput = "";
let dockerLogPath = "";
let dockerIngestOutput = "";
let cp: ControlPlane;
let prom: TestPrometheus;
const ledger: LedgerEntry[] = [];
const t: Record<"before" | "quiet" | "fixedAt" | "fixStart" | "end", number> = { before: 0, quiet: 0, fixedAt: 0, fixStart: 0, end: 0 };
let countersAtQuiet: Map<string, number>;
let countersAtEnd: Map<string, number>;
let dryRunsAtEnd: Map<string, number>;
let ingestOutput = "";
/** dry-run label patches sent to each HTTPRoute: validated, answered, never stored */
const DRY_RUNS = 3;

/**
 * apiserver_request_total for the controllers' resources, straight from the API server, summed per resource, verb and
 * subresource: the requests that were not dry runs, or (`dryRuns`) only those that were.
 */
async function serverCounters(dryRuns = false): Promise<Map<string, number>> {
  const { body } = await cp.get("/metrics");
  const out = new Map<string, number>();
  for (const line of body.split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const labels = Object.fromEntries([...line.matchAll(/(\w+)="([^"]*)"/g)].map((m) => [m[1], m[2]]));
    if (!OURS.has(labels.resource) || !Object.values(VERB).includes(labels.verb)) continue;
    if (((labels.dry_run ?? "") !== "") !== dryRuns) continue;
    const key = `${labels.resource}.${labels.group} ${labels.verb} ${labels.subresource ?? ""}`;
    out.set(key, (out.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1)));
  }
  return out;
}

async function json(base: string, path: string) {
  const res = await fetch(`${base}${path}`);
  const body = await res.json();
  expect(res.status, JSON.stringify(body)).toBe(200);
  return body.data;
}

beforeAll(async () => {
  const [appPort, tlsPort, promPort] = [await freePort(), await freePort(), await freePort()];
  const tls = selfSignedCert(mkdtempSync(join(tmpdir(), "churnscope-tls-")));
  const config = writeConfig(
    [
      `server:`,
      `  tls: { port: ${tlsPort}, certFile: ${tls.certFile}, keyFile: ${tls.keyFile} }`,
      `prometheus:`,
      `  url: http://127.0.0.1:${promPort}`,
      `  scrapeIntervalSeconds: 1`,
      `  cacheSeconds: 0`,
      `apiservers:`,
      `  project: [${JOB}]`,
      `audit:`,
      `  webhookToken: { env: AUDIT_TOKEN }`,
    ].join("\n"),
  );
  app = await startApp({ CHURNSCOPE_CONFIG: config, AUDIT_TOKEN: TOKEN, PORT: String(appPort) });
  // Every other batch held 1.5 s: the API server posts its next batch a second later, which overtakes it.
  webhookProxy = await startDelayingProxy(`https://127.0.0.1:${tlsPort}`, tls, 1500);
  t.before = Date.now();
  cp = await startControlPlane({
    users: CONTROLLER_USERS,
    webhook: { url: `${webhookProxy.url}/api/audit/webhook/${CLUSTER}`, token: TOKEN, caFile: tls.certFile },
  });
  prom = await startScrapingPrometheus({ job: JOB, url: cp.url, token: cp.adminToken }, { port: promPort });
  const uids = await createNamespaces(cp.kubeConfig(), [PROJECT_NAMESPACE, ROUTE_NAMESPACE]);
  const hubNamespace = `ns-${uids[PROJECT_NAMESPACE]}`;
  await createNamespaces(cp.kubeConfig(), [hubNamespace]);

  await connectorChurn(cp, ledger, { hubNamespace, ticks: 6 });
  // A quiet moment: the counters stand still, so a range starting here has an exact baseline.
  await sleep(2500);
  countersAtQuiet = await serverCounters();
  t.quiet = Date.now();
  await sleep(2500);
  await periodicStatusPatches(cp, ledger, { rounds: 8, pauseMs: 1500 });
  await sleep(1500);
  t.fixStart = Date.now();
  t.fixedAt = await unchangedWritesThenFix(cp, ledger, { rounds: 3, pauseMs: 400 });
  await bigRouteWrites(cp, ledger);
  for (let i = 0; i < DRY_RUNS; i++) {
    for (const name of routeNames) {
      const res = await cp.mergePatch(`/apis/gateway.networking.k8s.io/v1/namespaces/${ROUTE_NAMESPACE}/httproutes/${name}?dryRun=All`, {
        metadata: { labels: { tried: String(i) } },
      });
      expect(res.status, res.body).toBe(200);
    }
  }
  await sleep(2500);
  countersAtEnd = await serverCounters();
  dryRunsAtEnd = await serverCounters(true);
  t.end = Date.now();
  await sleep(4000); // a few more scrapes, and the webhook's last batches (each sent within 1 s, some held 1.5 s)

  // The same log file, read by `npm run ingest` into a store of its own, served by a second dashboard; and the same
  // lines as the API server leaves them in /var/log/pods with `--audit-log-path=-`, written by containerd's own log
  // writer (16 KiB parts, its default), read into a third.
  // Both from one copy of the log as it stands now (the API server goes on writing).
  const logs = mkdtempSync(join(tmpdir(), "churnscope-kube-logs-"));
  const logCopy = join(logs, "audit.log");
  copyFileSync(cp.auditLogPath, logCopy);
  containerLogPath = join(logs, "0.log");
  writeFileSync(containerLogPath, execFileSync(kubeBinaries().crilog, ["16384", logCopy], { maxBuffer: 1 << 30 }));
  const fromFile = ingestInto(logCopy, CLUSTER);
  ingestOutput = fromFile.output;
  const fromPods = ingestInto(containerLogPath, CLUSTER);
  containerIngestOutput = fromPods.output;
  // And as `kubectl logs --timestamps` prints that container's log, read by the kubelet's own log reader.
  const kubectlLogPath = join(logs, "kubectl-logs.log");
  writeFileSync(kubectlLogPath, execFileSync(kubeBinaries().crilog, ["read", containerLogPath], { maxBuffer: 1 << 30 }));
  kubectlIngestOutput = ingestInto(kubectlLogPath, CLUSTER).output;
  // And as Docker's json-file driver writes it (a node whose runtime is Docker), cut by Docker's own copier at 16 KiB.
  dockerLogPath = join(logs, "docker-json.log");
  writeFileSync(dockerLogPath, execFileSync(kubeBinaries().crilog, ["docker", "16384", logCopy], { maxBuffer: 1 << 30 }));
  dockerIngestOutput = ingestInto(dockerLogPath, CLUSTER).output;
  fromLog = await startApp({ CHURNSCOPE_DATA_DIR: fromFile.dataDir, CHURNSCOPE_CONFIG: writeConfig("") });
  fromContainerLog = await startApp({ CHURNSCOPE_DATA_DIR: fromPods.dataDir, CHURNSCOPE_CONFIG: writeConfig("") });
}, 240_000);

afterAll(async () => {
  await fromLog?.stop();
  await fromContainerLog?.stop();
  await prom?.stop();
  await cp?.stop();
  await webhookProxy?.stop();
  await app?.stop();
});

// Up to the end of the write-ups: the API server goes on writing (its lease), and the log file was read just after.
const range = () => `from=${iso(t.before - 60_000)}&to=${iso(t.end)}`;

describe("a real API server's audit log, its webhook and its counters", () => {
  it("the webhook and the log file give the same clients, writes, failures and no-ops as the server's own log", async () => {
    // Independent reading of the raw log: completed write requests per user and user-agent name.
    const truth = new Map<string, { writes: number; failed: number }>();
    const logged = serverWrites(cp.auditLogPath, { includeFailed: true }).filter((w) => w.receivedMs <= t.end);
    for (const w of logged) {
      const client = `${w.user} · ${w.userAgent.split("/")[0]}`;
      const row = truth.get(client) ?? { writes: 0, failed: 0 };
      row.writes++;
      if (w.code >= 300) row.failed++;
      truth.set(client, row);
    }
    const noops = new Map<string, number>();
    for (const l of ledger.filter((l) => l.intent === "no-op")) {
      const actor = Object.values(ACTORS).find((a) => a.userAgent === l.userAgent)!;
      const client = `${actor.user.name} · ${l.userAgent.split("/")[0]}`;
      noops.set(client, (noops.get(client) ?? 0) + 1);
    }
    const rowsOf = (clients: { client: string; writes: number; failed: number; noop: number }[]) =>
      new Map(clients.map((c) => [c.client, { writes: c.writes, failed: c.failed }]));
    let webhook = await json(app.url, `/api/clients?${range()}`);
    for (let i = 0; i < 50 && webhook.total < logged.length; i++) {
      await sleep(200);
      webhook = await json(app.url, `/api/clients?${range()}`);
    }
    const file = await json(fromLog.url, `/api/clients?${range()}`);
    expect(new Map([...rowsOf(webhook.clients)].sort())).toEqual(new Map([...truth].sort()));
    expect(new Map([...rowsOf(file.clients)].sort())).toEqual(new Map([...truth].sort()));
    for (const answer of [webhook, file]) {
      for (const c of answer.clients) expect(c.noop, `no-ops of ${c.client}`).toBe(noops.get(c.client) ?? 0);
    }
    expect(noops.get("linkerd-policy · policy-controller")).toBe(7 * routeNames.length + 1);
  });

  it("all three count the periodic identical status patches as no-op, flag their interval, and count the real change", async () => {
    // The webhook's batches came out of order (some held while a later one passed), and each write still has its class.
    expect(webhookProxy.stats.overtaken).toBeGreaterThan(0);
    for (const base of [app.url, fromLog.url, fromContainerLog.url]) {
      const objects = await json(base, `/api/objects?${range()}&kind=HTTPRoute&pageSize=50`);
      for (const name of routeNames) {
        const row = objects.rows.find((r: { name: string; namespace: string }) => r.name === name && r.namespace === ROUTE_NAMESPACE);
        const meant = ledger.filter((l) => l.kind === "HTTPRoute" && l.name === name);
        const count = (intent: string) => meant.filter((l) => l.intent === intent).length;
        expect(row, `${base} ${name}`).toMatchObject({
          writes: meant.length,
          create: count("create"),
          noop: count("no-op"),
          unrouted: count("unrouted"),
          routed: 0,
        });
        expect(row.periodicNoop, `${base} ${name}`).toMatchObject({ writer: "linkerd-policy" });
        expect(row.periodicNoop.everySeconds).toBeGreaterThanOrEqual(1.4);
        expect(row.periodicNoop.everySeconds).toBeLessThanOrEqual(2.5);
      }
      const connectors = await json(base, `/api/objects?${range()}&kind=Connector&pageSize=50`);
      for (const row of connectors.rows) {
        const meant = ledger.filter((l) => l.kind === "Connector" && l.name === row.name && l.namespace === row.namespace);
        const count = (intent: string) => meant.filter((l) => l.intent === intent).length;
        expect(row, `${base} ${row.namespace}/${row.name}`).toMatchObject({
          writes: meant.length,
          create: count("create"),
          routed: count("routed"),
          unrouted: count("unrouted"),
          noop: 0,
        });
      }
      expect(connectors.rows.length).toBe(new Set(ledger.filter((l) => l.kind === "Connector").map((l) => `${l.namespace}/${l.name}`)).size);
    }
  });

  it("reads writes whose audit lines are over 200 KB whole, from the webhook, the file and the container log (in 16 KiB parts)", async () => {
    // The server's own record: every completed write to the big route, and how long its line is.
    const lines = readFileSync(cp.auditLogPath, "utf8")
      .split("\n")
      .filter((l) => l.includes('"stage":"ResponseComplete"') && l.includes(`"name":"${BIG_ROUTE}"`));
    const writes = lines.map((l) => JSON.parse(l)).filter((e) => ["create", "patch"].includes(e.verb));
    expect(writes.map((e) => `${e.verb} ${e.objectRef.subresource ?? ""}`)).toEqual(["create ", "patch status", "patch status"]);
    for (const line of lines) expect(line.length).toBeGreaterThan(200_000);
    const meant = ledger.filter((l) => l.name === BIG_ROUTE);
    // containerd cut each of them into parts, every part but the last tagged P.
    const parts = readFileSync(containerLogPath, "utf8")
      .split("\n")
      .filter((l) => / stdout P /.test(l.slice(0, 60)));
    expect(parts.length).toBeGreaterThanOrEqual(3 * Math.floor(200_000 / 16_384));
    for (const base of [app.url, fromLog.url, fromContainerLog.url]) {
      const objects = await json(base, `/api/objects?${range()}&kind=HTTPRoute&pageSize=50`);
      const row = objects.rows.find((r: { name: string }) => r.name === BIG_ROUTE);
      expect(row, base).toMatchObject({ writes: meant.length, create: 1, unrouted: 1, noop: 1, routed: 0 });
    }
  });

  it("the container logs' summaries (containerd's, Docker's) are the file's, count for count but for their lines, and kubectl's reading is the file's", async () => {
    const containerLines = readFileSync(containerLogPath, "utf8").split("\n").length - 1;
    const fileLines = readFileSync(join(containerLogPath, "..", "audit.log"), "utf8").split("\n").length - 1;
    expect(containerLines).toBeGreaterThan(fileLines);
    expect(containerIngestOutput).toContain(`from ${containerLines.toLocaleString("en-US")} lines`);
    expect(ingestOutput).toContain(`from ${fileLines.toLocaleString("en-US")} lines`);
    // The summary without its first line (the file's size, the time taken, the store's path).
    const counts = (output: string) =>
      output
        .split("\n")
        .slice(1)
        .join("\n")
        .replace(/from [\d,]+ lines/, "from … lines");
    expect(counts(containerIngestOutput)).toBe(counts(ingestOutput));
    // Docker's json-file log too, its long lines cut into several records.
    const dockerLines = readFileSync(dockerLogPath, "utf8").split("\n").length - 1;
    expect(dockerLines).toBeGreaterThan(fileLines);
    expect(dockerIngestOutput).toContain(`from ${dockerLines.toLocaleString("en-US")} lines`);
    expect(counts(dockerIngestOutput)).toBe(counts(ingestOutput));
    // The API server writes nothing else to stdout: kubectl joins every line's parts, and the lines are the file's.
    expect(kubectlIngestOutput.split("\n").slice(1)).toEqual(ingestOutput.split("\n").slice(1));
  });

  it("Clients shows the controller's writes before and after its fix", async () => {
    const window = t.fixedAt - t.fixStart;
    const answer = await json(app.url, `/api/clients?from=${iso(t.fixStart)}&to=${iso(t.fixedAt + window)}&at=${t.fixedAt}`);
    const row = answer.comparison.rows.find((r: { client: string }) => r.client === "route-labeler · route-labeler");
    const by = (agent: string) => ledger.filter((l) => l.userAgent === agent && l.verb === "update").length;
    expect(by(ACTORS.labelerBefore.userAgent)).toBe(3 * routeNames.length);
    expect(row).toMatchObject({ before: by(ACTORS.labelerBefore.userAgent), after: by(ACTORS.labelerAfter.userAgent) });
    expect(by(ACTORS.labelerAfter.userAgent)).toBe(1);
  });

  it("Write totals per resource, verb and subresource equal the API server's own counters", async () => {
    const totals = async (fromMs: number) => {
      const data = await json(app.url, `/api/panels/write-totals?from=${iso(fromMs)}&to=${iso(t.end + 2000)}&apiserver=${JOB}`);
      const got = new Map<string, number>();
      for (const s of data.series as { labels: Record<string, string>; points: [number, number][] }[]) {
        if (OURS.has(s.labels.resource)) got.set(`${s.labels.resource}.${s.labels.group} ${s.labels.verb} ${s.labels.subresource ?? ""}`, s.points[0][1]);
      }
      return new Map([...got].sort());
    };
    expect(await totals(t.before - 60_000)).toEqual(new Map([...countersAtEnd].sort()));
    const since = new Map(
      [...countersAtEnd].map(([k, v]) => [k, v - (countersAtQuiet.get(k) ?? 0)]).filter(([, v]) => (v as number) > 0) as [string, number][],
    );
    const got = await totals(t.quiet);
    expect(new Map([...got].filter(([, v]) => v > 0))).toEqual(new Map([...since].sort()));
    // The write-ups themselves, as the server counted them: the identical patches and the unchanged updates are requests too.
    expect(countersAtEnd.get("httproutes.gateway.networking.k8s.io PATCH status")).toBe(
      ledger.filter((l) => l.kind === "HTTPRoute" && l.verb === "patch").length,
    );
    expect(countersAtEnd.get("httproutes.gateway.networking.k8s.io PUT ")).toBe(ledger.filter((l) => l.kind === "HTTPRoute" && l.verb === "update").length);
  });

  it("Write totals and audit ingest leave the server's dry runs out, and the panels count them when asked", async () => {
    expect(dryRunsAtEnd).toEqual(new Map([["httproutes.gateway.networking.k8s.io PATCH ", DRY_RUNS * routeNames.length]]));
    // The audit log holds them, answered 200; the ingester skips each one and says how many.
    const logged = readFileSync(cp.auditLogPath, "utf8")
      .split("\n")
      .filter((l) => l.includes('"stage":"ResponseComplete"'))
      .map((l) => JSON.parse(l))
      .filter((e) => isDryRunUri(e.requestURI));
    expect(logged).toHaveLength(DRY_RUNS * routeNames.length);
    expect(ingestOutput).toContain(`${DRY_RUNS * routeNames.length} dry runs not stored one by one`);
    const totals = async (dryRun: boolean) => {
      const data = await json(
        app.url,
        `/api/panels/write-totals?from=${iso(t.before - 60_000)}&to=${iso(t.end + 2000)}&apiserver=${JOB}${dryRun ? "&dryRun=include" : ""}`,
      );
      const series = (data.series as { labels: Record<string, string>; points: [number, number][] }[]).find(
        (s) => s.labels.resource === "httproutes" && s.labels.verb === "PATCH" && (s.labels.subresource ?? "") === "",
      );
      return series?.points[0][1] ?? 0;
    };
    expect(await totals(false)).toBe(countersAtEnd.get("httproutes.gateway.networking.k8s.io PATCH ") ?? 0);
    expect(await totals(true)).toBe((countersAtEnd.get("httproutes.gateway.networking.k8s.io PATCH ") ?? 0) + DRY_RUNS * routeNames.length);
  });

  it("the signal panels read the real 1.36 API server's own families", async () => {
    // Every family the panels read is one this server exposes, so none is named as missing.
    const { body } = await cp.get("/metrics");
    const exposed = new Set(body.split("\n").map((l) => l.split(/[{ ]/)[0]));
    for (const series of [
      "apiserver_storage_events_received_total",
      "apiserver_request_timestamp_comparison_time_count",
      "apiserver_flowcontrol_watch_count_samples_count",
      "apiserver_flowcontrol_work_estimated_seats_count",
      "apiserver_watch_events_sizes_count",
      "apiserver_resource_size_estimate_bytes",
      "apiserver_request_body_size_bytes_count",
    ]) {
      expect(exposed.has(series), series).toBe(true);
    }
    const query = `from=${iso(t.before)}&to=${iso(t.end)}&apiserver=${JOB}&resource=httproutes.gateway.networking.k8s.io`;
    const res = await fetch(`${app.url}/api/panels/noop-evidence?${query}`);
    const noop = await res.json();
    expect(res.status, JSON.stringify(noop)).toBe(200);
    expect(noop.infos.join(" ")).not.toMatch(/storage_events_received_total .* is not scraped/);
    const names = (noop.data.series as { labels: Record<string, string> }[]).map((s) => s.labels.series);
    expect(names).toContain("stored changes (storage events, one replica)");
    // Its equal_objects series appears at the first such update: until then the line reads 0, not "not scraped".
    expect(names).toContain("managedFields-only updates (reverted; whole API server)");
    expect(noop.infos.join(" ")).not.toMatch(/is not scraped here/);
    const cost = await (await fetch(`${app.url}/api/panels/request-cost?from=${iso(t.before)}&to=${iso(t.end)}&apiserver=${JOB}`)).json();
    expect(new Set((cost.data.series as { labels: Record<string, string> }[]).map((s) => s.labels.series))).toEqual(new Set(["watchers notified", "seats"]));
    const sizes = await (await fetch(`${app.url}/api/panels/object-sizes?${query}`)).json();
    expect((sizes.data.series as { labels: Record<string, string> }[]).map((s) => s.labels.series).sort()).toEqual([
      "estimated object size",
      "mean write body",
    ]);
  });
});
