/**
 * Reads counted per client, at the scale audit logs have: a Metadata-level log (AUDIT_MB, default 1024) of a
 * 300-node cluster in which nine requests of ten are reads (kubelets' gets and lists, node agents' informers with their
 * watches, a controller's lists), read in one run by:
 *  - `npm run ingest` into a fresh store (every request counted per client: reads per minute and shape, writes
 *    one by one);
 *  - the peer: `jq -c 'select(.stage=="ResponseComplete")'` over the same file;
 *  - `npm run ingest` of the same log without its reads (writes only), so the store's growth that reads cause is
 *    measured on its own: (store with reads − store without) per million reads.
 * Then the explosions: a log in which every request has a user agent and a user of its own (the store's cap on names
 * counts the rest as "other") and requestURIs of every length and encoding: each must be read whole, with peak RSS
 * and the store bounded.
 * Targets: ≥ 2× jq; ≤ 5 MB of store per million reads; peak RSS < 500 MB; the explosion's names capped.
 * Run: npx tsx test/bench/audit-reads.ts
 */
import { spawnSync } from "node:child_process";
import { createWriteStream, statSync } from "node:fs";
import { join } from "node:path";
import Database from "better-sqlite3";
import { requireBinary } from "@/lib/cli/processes";
import { NAME_CAPS } from "@/lib/store/api-calls";
import { micro } from "../helpers/audit-log";
import { ROOT } from "../helpers/root";
import { report, round } from "./report";
import { scratchDir } from "./scratch";

const TARGET_BYTES = Number(process.env.AUDIT_MB ?? 1024) * 1_048_576;
const NODES = 300;
const T0 = Date.UTC(2026, 10, 28, 0, 0, 0);
const KINDS = ["nodes", "sites.net.unbounded-cloud.io", "sitenodeslices.net.unbounded-cloud.io", "gatewaypools.net.unbounded-cloud.io"];

/** One audit event as kube-apiserver writes it at Metadata level (field order included). */
function event(o: {
  id: string;
  stage: string;
  verb: string;
  uri: string;
  user: string;
  groups: string[];
  agent: string;
  resource?: string;
  group?: string;
  namespace?: string;
  name?: string;
  code: number;
  receivedMs: number;
  latencyMs: number;
}): string {
  const ref = o.resource
    ? `,"objectRef":{"resource":"${o.resource}"${o.namespace ? `,"namespace":"${o.namespace}"` : ""}${o.name ? `,"name":"${o.name}"` : ""}${o.group ? `,"apiGroup":"${o.group}"` : ""},"apiVersion":"v1"}`
    : "";
  return (
    `{"kind":"Event","apiVersion":"audit.k8s.io/v1","level":"Metadata","auditID":"${o.id}","stage":"${o.stage}","requestURI":${JSON.stringify(o.uri)},` +
    `"verb":"${o.verb}","user":{"username":${JSON.stringify(o.user)},"groups":${JSON.stringify(o.groups)}},"sourceIPs":["10.0.${o.receivedMs % 250}.7"],` +
    `"userAgent":${JSON.stringify(o.agent)}${ref},"responseStatus":{"metadata":{},"code":${o.code}},"requestReceivedTimestamp":"${micro(o.receivedMs)}",` +
    `"stageTimestamp":"${micro(o.receivedMs + o.latencyMs)}","annotations":{"authorization.k8s.io/decision":"allow","authorization.k8s.io/reason":""}}\n`
  );
}

interface Generated {
  bytes: number;
  lines: number;
  reads: number;
  writes: number;
}

/**
 * Every 10 s each node's kubelet gets its Node, its Lease, two ConfigMaps, two Secrets and its pods (a list from the
 * watch cache) and updates its Lease; each node's agent gets its Node, and restarts one of its four watches in turn
 * (start, end); a controller lists the SiteNodeSlices from etcd (paginated). The writes alone go to `writesOnlyPath` too.
 */
async function generate(path: string, writesOnlyPath: string): Promise<Generated> {
  const out = createWriteStream(path);
  const writesOut = createWriteStream(writesOnlyPath);
  const g: Generated = { bytes: 0, lines: 0, reads: 0, writes: 0 };
  const emit = async (line: string, read: boolean) => {
    g.bytes += line.length;
    g.lines++;
    if (!out.write(line)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
    if (!read && !writesOut.write(line)) await new Promise<void>((resolve) => writesOut.once("drain", () => resolve()));
  };
  const sa = (name: string) => ({
    user: `system:serviceaccount:unbounded-net:${name}`,
    groups: ["system:serviceaccounts", "system:serviceaccounts:unbounded-net", "system:authenticated"],
  });
  let n = 0;
  for (let tick = 0; g.bytes < TARGET_BYTES; tick++) {
    for (let node = 0; node < NODES; node++) {
      const t = T0 + tick * 10_000 + node * 30;
      const kubelet = {
        user: `system:node:node-${node}`,
        groups: ["system:nodes", "system:authenticated"],
        agent: "kubelet/v1.36.3 (linux/amd64) kubernetes/abcdef0",
      };
      const get = async (uri: string, resource: string, name: string, namespace: string | undefined, at: number) => {
        await emit(
          event({ id: `r${n++}`, stage: "ResponseComplete", verb: "get", uri, ...kubelet, resource, namespace, name, code: 200, receivedMs: at, latencyMs: 2 }),
          true,
        );
        g.reads++;
      };
      await get(`/api/v1/nodes/node-${node}?resourceVersion=0&timeout=10s`, "nodes", `node-${node}`, undefined, t);
      await get(`/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-${node}?timeout=10s`, "leases", `node-${node}`, "kube-node-lease", t + 1);
      for (const cm of ["kube-proxy", "kube-root-ca.crt"]) await get(`/api/v1/namespaces/kube-system/configmaps/${cm}`, "configmaps", cm, "kube-system", t + 2);
      for (const s of ["node-agent-token", "registry-credentials"])
        await get(`/api/v1/namespaces/kube-system/secrets/${s}`, "secrets", s, "kube-system", t + 3);
      await emit(
        event({
          id: `r${n++}`,
          stage: "ResponseComplete",
          verb: "list",
          uri: `/api/v1/pods?fieldSelector=spec.nodeName%3Dnode-${node}&limit=500&resourceVersion=0`,
          ...kubelet,
          resource: "pods",
          code: 200,
          receivedMs: t + 4,
          latencyMs: 8,
        }),
        true,
      );
      g.reads++;
      await emit(
        event({
          id: `w${n++}`,
          stage: "ResponseComplete",
          verb: "update",
          uri: `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/node-${node}?timeout=10s`,
          ...kubelet,
          resource: "leases",
          group: "coordination.k8s.io",
          namespace: "kube-node-lease",
          name: `node-${node}`,
          code: 200,
          receivedMs: t + 5,
          latencyMs: 4,
        }),
        false,
      );
      g.writes++;
      const agent = { ...sa(`node-${node}`), agent: "unbounded-net-node/v0.8.0 (linux/amd64) kubernetes/abcdef0" };
      await emit(
        event({
          id: `r${n++}`,
          stage: "ResponseComplete",
          verb: "get",
          uri: `/api/v1/nodes/node-${node}`,
          ...agent,
          resource: "nodes",
          name: `node-${node}`,
          code: 200,
          receivedMs: t + 6,
          latencyMs: 2,
        }),
        true,
      );
      g.reads++;
      // One of its watches ends and starts again (client-go's 5–10 min timeout, four kinds).
      if ((tick + node) % 12 === 0) {
        const kind = KINDS[((tick / 12 + node) % KINDS.length) | 0];
        const [resource, group] = kind.split(/\.(.*)/s);
        const uri = `${group ? `/apis/${group}/v1alpha1` : "/api/v1"}/${resource}?allowWatchBookmarks=true&resourceVersion=4321&timeoutSeconds=433&watch=true`;
        const id = `s${n++}`;
        for (const stage of ["ResponseStarted", "ResponseComplete"])
          await emit(
            event({
              id,
              stage,
              verb: "watch",
              uri,
              ...agent,
              resource,
              group,
              code: 200,
              receivedMs: t + 7,
              latencyMs: stage === "ResponseStarted" ? 1 : 433_000,
            }),
            true,
          );
        g.reads++;
      }
    }
    const controller = { ...sa("controller"), agent: "unbounded-net-controller/v0.8.0 (linux/amd64) kubernetes/abcdef0" };
    for (let page = 0; page < 3; page++) {
      await emit(
        event({
          id: `r${n++}`,
          stage: "ResponseComplete",
          verb: "list",
          uri: `/apis/net.unbounded-cloud.io/v1alpha1/sitenodeslices?limit=500${page > 0 ? `&continue=eyJydiI6${page}` : ""}`,
          ...controller,
          resource: "sitenodeslices",
          group: "net.unbounded-cloud.io",
          code: 200,
          receivedMs: T0 + tick * 10_000 + 9_000 + page,
          latencyMs: 40,
        }),
        true,
      );
      g.reads++;
    }
  }
  await new Promise<void>((resolve) => out.end(resolve));
  await new Promise<void>((resolve) => writesOut.end(resolve));
  return g;
}

/** Every request its own user agent and user; request URIs of every length, some with broken escapes and bytes. */
async function explosion(path: string, requests: number): Promise<void> {
  const out = createWriteStream(path);
  for (let i = 0; i < requests; i++) {
    const long = "x".repeat((i * 7919) % 200_000);
    const uri =
      i % 3 === 0 ? `/api/v1/pods?labelSelector=%zz${long}` : i % 3 === 1 ? `/${long}%F0%9F%98%80/%E0%A4%A` : `/api/v1/namespaces/ns-${i}/pods/p?limit=${long}`;
    const line = event({
      id: `x${i}`,
      stage: "ResponseComplete",
      verb: i % 3 === 1 ? "get" : "list",
      uri,
      user: `user-${i}`,
      groups: ["system:authenticated"],
      agent: `tool-${i}/v${i}.0 ${"y".repeat(i % 1000)}`,
      resource: i % 3 === 1 ? undefined : "pods",
      namespace: i % 3 === 2 ? `ns-${i}` : undefined,
      code: 200,
      receivedMs: T0 + i * 10,
      latencyMs: 1,
    });
    if (!out.write(line)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  }
  await new Promise<void>((resolve) => out.end(resolve));
}

/** Runs a command under /usr/bin/time: wall seconds and peak RSS (MB). */
function measured(command: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  const run = spawnSync("/usr/bin/time", ["-f", "__time %e %M", command, ...args], { cwd: ROOT, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const match = /__time ([\d.]+) (\d+)/.exec(run.stderr);
  if (run.status !== 0 || !match) throw new Error(`${command} failed (${run.status}): ${run.stderr.slice(-2000)}`);
  return { seconds: Number(match[1]), peakRssMB: round(Number(match[2]) / 1024, 0), stdout: run.stdout };
}

/** The store's bytes once its write-ahead log is folded in: what it keeps. */
function storeBytes(dataDir: string): number {
  const path = join(dataDir, "churnscope.sqlite");
  const db = new Database(path);
  db.pragma("wal_checkpoint(TRUNCATE)");
  db.close();
  return statSync(path).size;
}

async function main() {
  requireBinary("jq", "apt-get install -y jq");
  requireBinary("/usr/bin/time", "apt-get install -y time");
  const dir = scratchDir("audit-reads");
  const log = process.env.AUDIT_LOG ?? join(dir, "reads.log");
  const writesOnly = join(dir, "writes-only.log");
  const generated = await generate(log, writesOnly);
  // AUDIT_LOG with AUDIT_GENERATE_ONLY: write the log there for profiling, and stop.
  if (process.env.AUDIT_GENERATE_ONLY) return console.log(JSON.stringify({ generated: log, ...generated }));
  const mb = statSync(log).size / 1_048_576;
  const ingestOf = (path: string, data: string) =>
    measured(process.execPath, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "lib", "cli", "ingest.ts"), "--cluster", "bench", path], {
      ...process.env,
      CHURNSCOPE_DATA_DIR: join(dir, data),
      CHURNSCOPE_CONFIG: "",
    });
  const ingest = ingestOf(log, "data");
  const jq = measured("/bin/sh", ["-c", `jq -c 'select(.stage=="ResponseComplete")' '${log}' > /dev/null`]);
  const withoutReads = ingestOf(writesOnly, "data-writes");
  const growth = storeBytes(join(dir, "data")) - storeBytes(join(dir, "data-writes"));

  const exploded = join(dir, "explosion.log");
  const explodedRequests = 20_000;
  await explosion(exploded, explodedRequests);
  const explodedRun = ingestOf(exploded, "data-explosion");
  const names = new Database(join(dir, "data-explosion", "churnscope.sqlite"), { readonly: true });
  const kept = names.prepare("SELECT kind, COUNT(*) AS n FROM api_names GROUP BY kind").all() as { kind: string; n: number }[];
  const counted = (names.prepare("SELECT SUM(calls) AS n FROM api_calls").get() as { n: number }).n;
  names.close();

  report({
    bench: "audit-reads",
    file: {
      mb: round(mb, 0),
      lines: generated.lines,
      reads: generated.reads,
      writes: generated.writes,
      readShare: round(generated.reads / (generated.reads + generated.writes), 3),
    },
    ingest: {
      seconds: ingest.seconds,
      mbPerSecond: round(mb / ingest.seconds, 1),
      peakRssMB: ingest.peakRssMB,
      summary: ingest.stdout.trim().split("\n").slice(0, 4),
    },
    peer: { tool: "jq -c 'select(.stage==\"ResponseComplete\")'", seconds: jq.seconds, mbPerSecond: round(mb / jq.seconds, 1), peakRssMB: jq.peakRssMB },
    vsJq: round(jq.seconds / ingest.seconds, 2),
    store: {
      withReadsMB: round(storeBytes(join(dir, "data")) / 1_048_576, 1),
      writesOnlyMB: round(storeBytes(join(dir, "data-writes")) / 1_048_576, 1),
      writesOnlySeconds: withoutReads.seconds,
      mbPerMillionReads: round(growth / 1_048_576 / (generated.reads / 1e6), 2),
    },
    explosion: {
      requests: explodedRequests,
      seconds: explodedRun.seconds,
      peakRssMB: explodedRun.peakRssMB,
      callsCounted: Number(counted),
      namesKept: Object.fromEntries(kept.map((k) => [k.kind, k.n])),
      caps: NAME_CAPS,
      summary: explodedRun.stdout.trim().split("\n").slice(0, 4),
    },
    target: { vsJq: ">= 2", mbPerMillionReads: "<= 5", peakRssMB: "< 500", namesKept: "<= caps + 1 (other) each" },
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
