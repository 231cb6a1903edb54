/**
 * Audit ingest throughput and memory: generates a RequestResponse audit log (AUDIT_MB, default 1024)
 * and reads it with, in one run:
 *  - `npm run ingest` (the CLI as operators run it, into a fresh store);
 *  - the peer: `jq -c 'select(.verb=="update" or .verb=="patch")'` on the same file;
 *  - the ceiling: a bare line loop that JSON.parses every line (same line splitting as the ingester);
 *  - `npm run ingest` of the same log as a container log, written by containerd's own log writer (in parts of
 *    CONTAINER_LINE_BYTES, default 16384, containerd's default), as /var/log/pods holds an API server's audit log
 *    written to stdout.
 *  - `npm run ingest` of the same events as jq prints them (`jq .`, each over many lines), and as one Firehose S3
 *    object: gzip members run together, each a CloudWatch Logs subscription message of 100 events, with nothing
 *    between them (one line of the whole log's size, read a piece at a time).
 * Each runs as its own process under /usr/bin/time for wall time and peak RSS.
 * Targets: ≥ 2× jq's MB/s, ≥ 0.5× the ceiling's, peak RSS < 500 MB.
 *
 * The log: HTTPRoute status patches re-sent unchanged (the HTTPRoute status-patch fix), Connector status updates, gets,
 * lists of 20 routes and watches, each write as RequestReceived + ResponseComplete with bodies, as a
 * RequestResponse policy logs them. The write share of the bytes is reported with the figures.
 * Run: npx tsx test/bench/audit-ingest.ts
 */
import { spawnSync } from "node:child_process";
import { createReadStream, createWriteStream, existsSync, rmSync, statSync, writeFileSync } from "node:fs";
import { gzipSync } from "node:zlib";
import { createInterface } from "node:readline";
import { join } from "node:path";
import { requireBinary } from "@/lib/cli/processes";
import { kubeBinaries } from "../helpers/control-plane";
import { auditEvent, httpRoute } from "../helpers/audit-log";
import { ROOT } from "../helpers/root";
import { report, round } from "./report";
import { scratchDir } from "./scratch";

const TARGET_BYTES = Number(process.env.AUDIT_MB ?? 1024) * 1_048_576;
const ROUTES = 200;
const T0 = Date.UTC(2026, 10, 28, 0, 0, 0);

function connector(name: string, rv: number, message: string) {
  return {
    apiVersion: "networking.datumapis.com/v1alpha1",
    kind: "Connector",
    metadata: {
      name,
      namespace: "project-a",
      resourceVersion: String(rv),
      uid: `uid-${name}`,
      generation: 3,
      labels: { app: "connector" },
      managedFields: [{ manager: "connector-agent", operation: "Update", subresource: "status", time: new Date(T0 + rv).toISOString() }],
    },
    spec: { connectionClassName: "datum", connectionDetails: { type: "PublicKey", publicKey: { id: `pk-${name}` } } },
    status: {
      conditions: [
        { type: "Ready", status: "True", reason: "Online", message, lastTransitionTime: "2026-11-27T00:00:00Z", observedGeneration: 3 },
        { type: "Accepted", status: "True", reason: "Accepted", message: "ok", lastTransitionTime: "2026-11-27T00:00:00Z", observedGeneration: 3 },
      ],
      connectionDetails: { type: "PublicKey", publicKey: { id: `pk-${name}`, homeRegion: "eu-west", addresses: ["10.1.2.3:51820", "192.0.2.10:51820"] } },
    },
  };
}

async function generate(path: string): Promise<{ bytes: number; writeBytes: number; lines: number; writes: number }> {
  const out = createWriteStream(path);
  let bytes = 0;
  let writeBytes = 0;
  let lines = 0;
  let writes = 0;
  const routes = Array.from({ length: ROUTES }, (_, i) => httpRoute(`route-${i}`, 1000 + i, [`r${i}.example.com`], 1));
  const group = "gateway.networking.k8s.io";
  let rv = 100_000;
  const emit = async (event: Record<string, unknown>, isWrite: boolean) => {
    const line = `${JSON.stringify(event)}\n`;
    bytes += line.length;
    lines++;
    if (isWrite) writeBytes += line.length;
    if (!out.write(line)) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  };
  for (let i = 0; bytes < TARGET_BYTES; i++) {
    const t = T0 + i * 50;
    const r = i % ROUTES;
    const route = routes[r];
    const patch = { status: route.status };
    const id = `b-${i}`;
    await emit(
      auditEvent({
        auditID: `${id}-p`,
        stage: "RequestReceived",
        verb: "patch",
        resource: "httproutes",
        group,
        namespace: "apps",
        name: route.metadata.name,
        subresource: "status",
        receivedMs: t,
        requestObject: patch,
      }),
      true,
    );
    await emit(
      auditEvent({
        auditID: `${id}-p`,
        verb: "patch",
        resource: "httproutes",
        group,
        namespace: "apps",
        name: route.metadata.name,
        subresource: "status",
        receivedMs: t,
        requestObject: patch,
        responseObject: route,
        user: "system:serviceaccount:envoy-gateway-system:envoy-gateway",
      }),
      true,
    );
    writes++;
    if (i % 3 === 0) {
      const c = connector(`c-${i % 89}`, ++rv, `seen ${i}`);
      await emit(
        auditEvent({
          auditID: `${id}-c`,
          stage: "RequestReceived",
          verb: "update",
          resource: "connectors",
          group: "networking.datumapis.com",
          version: "v1alpha1",
          namespace: "project-a",
          name: c.metadata.name,
          subresource: "status",
          receivedMs: t + 5,
          requestObject: c,
        }),
        true,
      );
      await emit(
        auditEvent({
          auditID: `${id}-c`,
          verb: "update",
          resource: "connectors",
          group: "networking.datumapis.com",
          version: "v1alpha1",
          namespace: "project-a",
          name: c.metadata.name,
          subresource: "status",
          receivedMs: t + 5,
          requestObject: c,
          responseObject: c,
          user: "system:serviceaccount:datum:connector-agent",
        }),
        true,
      );
      writes++;
    }
    await emit(
      auditEvent({
        auditID: `${id}-g`,
        verb: "get",
        resource: "httproutes",
        group,
        namespace: "apps",
        name: route.metadata.name,
        receivedMs: t + 10,
        responseObject: route,
      }),
      false,
    );
    if (i % 10 === 0)
      await emit(
        auditEvent({
          auditID: `${id}-l`,
          verb: "list",
          resource: "httproutes",
          group,
          namespace: "apps",
          receivedMs: t + 20,
          responseObject: { kind: "HTTPRouteList", apiVersion: `${group}/v1`, metadata: { resourceVersion: String(rv) }, items: routes.slice(0, 20) },
        }),
        false,
      );
    if (i % 5 === 0) {
      await emit(auditEvent({ auditID: `${id}-w`, stage: "ResponseStarted", verb: "watch", resource: "httproutes", group, receivedMs: t + 30 }), false);
      await emit(auditEvent({ auditID: `${id}-w`, verb: "watch", resource: "httproutes", group, receivedMs: t + 30, latencyMs: 300_000 }), false);
    }
  }
  await new Promise<void>((resolve) => out.end(resolve));
  return { bytes, writeBytes, lines, writes };
}

/** The figures of an existing generated log. */
async function countLog(path: string): Promise<{ bytes: number; writeBytes: number; lines: number; writes: number }> {
  const figures = { bytes: 0, writeBytes: 0, lines: 0, writes: 0 };
  const lines = createInterface({ input: createReadStream(path), crlfDelay: Infinity });
  for await (const line of lines) {
    figures.lines++;
    figures.bytes += line.length + 1;
    const write = /"verb":"(update|patch)"/.test(line.slice(0, 400));
    if (write) figures.writeBytes += line.length + 1;
    if (write && line.includes('"stage":"ResponseComplete"')) figures.writes++;
  }
  return figures;
}

/** The log as Firehose writes a CloudWatch Logs subscription to S3: gzipped messages of 100 events, run together. */
async function writeFirehoseObject(log: string, path: string): Promise<void> {
  const out = createWriteStream(path);
  let batch: string[] = [];
  const flush = async () => {
    const message = {
      messageType: "DATA_MESSAGE",
      owner: "123456789012",
      logGroup: "/aws/eks/bench/cluster",
      logStream: "kube-apiserver-audit-bench",
      subscriptionFilters: ["to-firehose"],
      logEvents: batch.map((line, i) => ({ id: String(i), timestamp: T0 + i, message: line })),
    };
    batch = [];
    if (!out.write(gzipSync(JSON.stringify(message)))) await new Promise<void>((resolve) => out.once("drain", () => resolve()));
  };
  for await (const line of createInterface({ input: createReadStream(log), crlfDelay: Infinity })) {
    batch.push(line);
    if (batch.length === 100) await flush();
  }
  if (batch.length > 0) await flush();
  await new Promise<void>((resolve) => out.end(resolve));
}

/** Runs a command under /usr/bin/time: wall seconds and peak RSS (MB). */
function measured(command: string, args: string[], env: NodeJS.ProcessEnv = process.env) {
  const run = spawnSync("/usr/bin/time", ["-f", "__time %e %M", command, ...args], { cwd: ROOT, env, encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  const match = /__time ([\d.]+) (\d+)/.exec(run.stderr);
  if (run.status !== 0 || !match) throw new Error(`${command} failed (${run.status}): ${run.stderr.slice(-2000)}`);
  return { seconds: Number(match[1]), peakRssMB: round(Number(match[2]) / 1024, 0), stdout: run.stdout };
}

const CEILING = `
const { createReadStream } = require("node:fs");
(async () => {
  const stream = createReadStream(process.argv[2], { highWaterMark: 1024 * 1024 });
  stream.setEncoding("utf8");
  let carry = "", parsed = 0;
  for await (const chunk of stream) {
    let text = carry + chunk, start = 0;
    for (let end = text.indexOf("\\n"); end !== -1; end = text.indexOf("\\n", start)) {
      const line = text.slice(start, end);
      if (line.trim() !== "") { JSON.parse(line); parsed++; }
      start = end + 1;
    }
    carry = text.slice(start);
  }
  console.log(parsed);
})();
`;

async function main() {
  requireBinary("jq", "apt-get install -y jq");
  requireBinary("/usr/bin/time", "apt-get install -y time");
  const dir = scratchDir("audit");
  // AUDIT_LOG keeps the generated log there (and reuses it when present) for profiling runs.
  const log = process.env.AUDIT_LOG ?? join(dir, "audit.log");
  const generated = process.env.AUDIT_LOG && existsSync(log) ? await countLog(log) : await generate(log);
  const mb = statSync(log).size / 1_048_576;
  const ceilingScript = join(dir, "ceiling.cjs");
  writeFileSync(ceilingScript, CEILING);

  const ingestOf = (path: string, data: string) =>
    measured(process.execPath, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "lib", "cli", "ingest.ts"), "--cluster", "bench", path], {
      ...process.env,
      CHURNSCOPE_DATA_DIR: join(dir, data),
      CHURNSCOPE_CONFIG: "",
    });
  const ingest = ingestOf(log, "data");
  const containerLog = join(dir, "container.log");
  const partBytes = Number(process.env.CONTAINER_LINE_BYTES ?? 16_384);
  measured("/bin/sh", ["-c", `'${kubeBinaries().crilog}' ${partBytes} '${log}' > '${containerLog}'`]);
  const containerMB = statSync(containerLog).size / 1_048_576;
  const container = ingestOf(containerLog, "data-container");
  const pretty = join(dir, "pretty.json");
  measured("/bin/sh", ["-c", `jq . '${log}' > '${pretty}'`]);
  const prettyMB = statSync(pretty).size / 1_048_576;
  const printed = ingestOf(pretty, "data-pretty");
  rmSync(pretty);
  const firehose = join(dir, "firehose-object.gz");
  await writeFirehoseObject(log, firehose);
  const firehoseRun = ingestOf(firehose, "data-firehose");
  const firehoseMB = statSync(firehose).size / 1_048_576;
  const jq = measured("/bin/sh", ["-c", `jq -c 'select(.verb=="update" or .verb=="patch")' '${log}' > /dev/null`]);
  const ceiling = measured(process.execPath, [ceilingScript, log]);
  const storeMB = round(statSync(join(dir, "data", "churnscope.sqlite")).size / 1_048_576, 0);

  const rate = (seconds: number) => round(mb / seconds, 1);
  // The same events read another way, so the same writes stored: the summary's second line is the plain file's.
  const beside = (run: { seconds: number; peakRssMB: number; stdout: string }) => ({
    seconds: run.seconds,
    eventsMBPerSecond: rate(run.seconds),
    peakRssMB: run.peakRssMB,
    sameWrites: run.stdout.split("\n")[1] === ingest.stdout.split("\n")[1],
    vsPlainFile: round(ingest.seconds / run.seconds, 2),
  });
  report({
    bench: "audit-ingest",
    file: { mb: round(mb, 0), lines: generated.lines, writeRequests: generated.writes, writeShareOfBytes: round(generated.writeBytes / generated.bytes, 2) },
    ingest: {
      seconds: ingest.seconds,
      mbPerSecond: rate(ingest.seconds),
      linesPerSecond: round(generated.lines / ingest.seconds, 0),
      peakRssMB: ingest.peakRssMB,
      storeMB,
      summary: ingest.stdout.trim().split("\n").slice(0, 3),
    },
    peer: { tool: 'jq -c \'select(.verb=="update" or .verb=="patch")\'', seconds: jq.seconds, mbPerSecond: rate(jq.seconds), peakRssMB: jq.peakRssMB },
    ceiling: { tool: "node JSON.parse line loop", seconds: ceiling.seconds, mbPerSecond: rate(ceiling.seconds), peakRssMB: ceiling.peakRssMB },
    containerLog: {
      partBytes,
      mb: round(containerMB, 0),
      seconds: container.seconds,
      mbPerSecond: round(containerMB / container.seconds, 1),
      peakRssMB: container.peakRssMB,
      summary: container.stdout.trim().split("\n").slice(1, 3),
      vsPlainFile: round(ingest.seconds / container.seconds, 2),
    },
    printedByJq: { mb: round(prettyMB, 0), ...beside(printed) },
    firehoseObject: { gzipMB: round(firehoseMB, 0), ...beside(firehoseRun) },
    vsJq: round(jq.seconds / ingest.seconds, 2),
    vsCeiling: round(ceiling.seconds / ingest.seconds, 2),
    target: { vsJq: ">= 2", vsCeiling: ">= 0.5", peakRssMB: "< 500" },
  });
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
