/**
 * Audit logs read from a bucket, as a managed cluster exports them: a real S3 server (Versity Gateway) holding a
 * real kube-apiserver's audit log cut into objects of the shapes that reach S3 (a gzipped log; CloudWatch Logs
 * subscription messages as Firehose delivers them, one gzip member each; the same run together in one member), one
 * more appearing while the dashboard runs, a corrupt one, and a second source whose credentials the server refuses.
 * Every request is stored once (count_audit.py's reading of the same objects is the truth), each object is read once
 * through a restart, the corrupt one is reported and the rest read, and the refused source says why and keeps trying.
 */
import { PutObjectCommand, CreateBucketCommand } from "@aws-sdk/client-s3";
import Database from "better-sqlite3";
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { AuditSourcesAnswer, AuditSourceStatus } from "@/lib/wire/audit";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { ROOT } from "../helpers/root";
import { startS3, type TestS3 } from "../helpers/s3-server";

const OWN_LOG = join(ROOT, "test", "fixtures", "audit-logs", "kube-apiserver", "audit.log.gz");
const COUNT_AUDIT = join(ROOT, "test", "helpers", "count_audit.py");
const BUCKET = "eks-audit";
const PREFIX = "AWSLogs/123456789012/eks/prod/";
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

let s3: TestS3;
let app: TestApp;
let env: Record<string, string>;
let dataDir = "";
const objectDir = mkdtempSync(join(tmpdir(), "churnscope-bucket-objects-"));
const lines = gunzipSync(readFileSync(OWN_LOG)).toString("utf8").split("\n").filter(Boolean);

/** A CloudWatch Logs subscription message, as EKS's audit log group sends it to Firehose. */
function subscriptionMessage(part: string[], first: number): string {
  return JSON.stringify({
    messageType: "DATA_MESSAGE",
    owner: "123456789012",
    logGroup: "/aws/eks/prod/cluster",
    logStream: "kube-apiserver-audit-0a1b2c3d",
    subscriptionFilters: ["churnscope"],
    logEvents: part.map((message, i) => ({
      id: String(first + i),
      timestamp: Date.parse(JSON.parse(message).stageTimestamp ?? "2026-12-02T19:14:14Z"),
      message,
    })),
  });
}

const chunks = (part: string[], size: number) => Array.from({ length: Math.ceil(part.length / size) }, (_, i) => part.slice(i * size, (i + 1) * size));

/** The objects, written beside the test too, where count_audit.py reads them. */
const objects: Record<string, Buffer> = {
  // A rotated log, gzipped.
  [`${PREFIX}2026/12/02/19/audit-0001.log.gz`]: gzipSync(lines.slice(0, 300).join("\n") + "\n"),
  // Firehose with CloudWatch's records as they came: each record a gzip member of its own, one after another.
  [`${PREFIX}2026/12/02/19/firehose-0002.gz`]: Buffer.concat(chunks(lines.slice(300, 550), 60).map((c, i) => gzipSync(subscriptionMessage(c, 300 + i * 60)))),
};
/** Put while the dashboard runs: the messages run together in one member, and an object whose gzip is damaged. */
const later: Record<string, Buffer> = {
  [`${PREFIX}2026/12/02/20/firehose-0003.gz`]: gzipSync(
    chunks(lines.slice(550), 80)
      .map((c, i) => subscriptionMessage(c, 550 + i * 80))
      .join(""),
  ),
};
const corruptKey = `${PREFIX}2026/12/02/20/firehose-0004.gz`;
const corrupt = (() => {
  const whole = gzipSync(lines.slice(0, 200).join("\n"));
  // Deflate data overwritten halfway through, what a torn upload leaves, and megabytes after it that the reader
  // never reaches: the object is read with problems, not taken for a connection cut short and read again.
  whole.fill(0x55, Math.floor(whole.length / 2), Math.floor(whole.length / 2) + 64);
  return Buffer.concat([whole, randomBytes(4 << 20)]);
})();

function countPy(files: string[]): Record<string, number> {
  const run = spawnSync("python3", [COUNT_AUDIT, ...files], { encoding: "utf8", maxBuffer: 64 * 1024 * 1024 });
  if (run.error) throw new Error(`this test needs python3 to count the objects independently: ${run.error.message}`);
  if (run.status !== 0) throw new Error(`count_audit.py failed: ${run.stderr}`);
  return JSON.parse(run.stdout).counts;
}

async function put(key: string, body: Buffer): Promise<void> {
  await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: body }));
}

async function sources(): Promise<Record<string, AuditSourceStatus>> {
  const res = await fetch(`${app.url}/api/audit/sources`);
  expect(res.status).toBe(200);
  const body = (await res.json()) as { data: AuditSourcesAnswer };
  return Object.fromEntries(body.data.sources.map((s) => [s.name, s]));
}

async function until<T>(what: string, check: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (error) {
      last = error;
    }
    if (Date.now() > deadline) throw new Error(`${what} did not happen within ${timeoutMs} ms (${String(last ?? "")})\n${app.running.output().slice(-3000)}`);
    await sleep(250);
  }
}

/** Reads the dashboard's store file directly: its own record of what it kept. */
function fromStore<T>(read: (db: Database.Database) => T): T {
  const db = new Database(join(dataDir, "churnscope.sqlite"), { readonly: true });
  try {
    return read(db);
  } finally {
    db.close();
  }
}

function stored(): { requests: number; failed: number; byVerb: Record<string, number> } {
  return fromStore((db) => {
    const rows = db.prepare("SELECT verb, COUNT(*) AS n FROM audit_requests WHERE cluster = 'prod' GROUP BY verb").all() as { verb: string; n: number }[];
    const byVerb = Object.fromEntries(rows.map((r) => [r.verb, r.n]));
    const failed = (db.prepare("SELECT COUNT(*) AS n FROM audit_requests WHERE cluster = 'prod' AND code >= 400").get() as { n: number }).n;
    return { requests: Object.values(byVerb).reduce((a, b) => a + b, 0), failed, byVerb };
  });
}

function readTimes(): Record<string, number> {
  return fromStore((db) => {
    const rows = db.prepare("SELECT object_key, read_ms FROM audit_bucket_objects WHERE source = 'eks-prod'").all() as {
      object_key: string;
      read_ms: number;
    }[];
    return Object.fromEntries(rows.map((r) => [r.object_key, r.read_ms]));
  });
}

beforeAll(async () => {
  s3 = await startS3();
  await s3.client.send(new CreateBucketCommand({ Bucket: BUCKET }));
  for (const [key, body] of Object.entries(objects)) await put(key, body);
  dataDir = mkdtempSync(join(tmpdir(), "churnscope-bucket-"));
  env = {
    CHURNSCOPE_CONFIG: writeConfig(
      [
        "recorder:",
        "  retentionDays: 3650",
        "audit:",
        "  sources:",
        "    - name: eks-prod",
        "      cluster: prod",
        "      pollSeconds: 1",
        "      s3:",
        `        bucket: ${BUCKET}`,
        `        prefix: ${PREFIX}`,
        `        endpoint: ${s3.endpoint}`,
        "        forcePathStyle: true",
        "        accessKeyId: { env: S3_KEY }",
        "        secretAccessKey: { env: S3_SECRET }",
        "    - name: refused",
        "      pollSeconds: 1",
        "      s3:",
        `        bucket: ${BUCKET}`,
        `        endpoint: ${s3.endpoint}`,
        "        forcePathStyle: true",
        "        accessKeyId: { env: S3_KEY }",
        "        secretAccessKey: { env: S3_WRONG_SECRET }",
        "",
      ].join("\n"),
    ),
    CHURNSCOPE_DATA_DIR: dataDir,
    S3_KEY: s3.accessKeyId,
    S3_SECRET: s3.secretAccessKey,
    S3_WRONG_SECRET: "not-the-secret",
  };
  app = await startApp(env);
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await s3?.stop();
});

describe("audit bucket source (real S3 server)", () => {
  it("reads the objects there at start, each once, with every request count_audit.py finds in them", async () => {
    const status = await until("both objects read", async () => {
      const s = (await sources())["eks-prod"];
      return s.objects.read === 2 ? s : undefined;
    });
    for (const [key, body] of Object.entries(objects)) writeFileSync(join(objectDir, key.replaceAll("/", "_")), body);
    const truth = countPy(Object.keys(objects).map((key) => join(objectDir, key.replaceAll("/", "_"))));
    expect(truth.requests).toBeGreaterThan(100);
    const s = stored();
    expect(s.requests).toBe(truth.requests);
    expect(s.failed).toBe(truth.failed);
    expect(status.requests).toBe(truth.requests);
    expect(status.error).toBeNull();
    expect(status.objects).toEqual({ read: 2, problems: 0, skipped: 0 });
    expect(status.bytes).toBe(Object.values(objects).reduce((n, b) => n + b.length, 0));
  });

  it("says the refused source's credentials were refused, names the setting, and keeps trying", async () => {
    const first = await until("the refused source polled", async () => {
      const s = (await sources()).refused;
      return s.polls >= 1 ? s : undefined;
    });
    expect(first.error).toMatch(/refused the credentials \(SignatureDoesNotMatch\)/);
    expect(first.error).toContain("audit.sources[1].s3.accessKeyId");
    expect(first.lastSuccessMs).toBeNull();
    await until("the refused source polled again", async () => ((await sources()).refused.polls > first.polls ? true : undefined));
    const metrics = await (await fetch(`${app.url}/metrics`)).text();
    expect(metrics).toMatch(/^churnscope_audit_source_failing\{source="refused"\} 1$/m);
    expect(metrics).toMatch(/^churnscope_audit_source_failing\{source="eks-prod"\} 0$/m);
    // Neither the endpoint nor a secret in what the browser gets.
    const text = await (await fetch(`${app.url}/api/audit/sources`)).text();
    expect(text).not.toContain(s3.endpoint.replace("http://", ""));
    expect(text).not.toContain(s3.secretAccessKey);
    expect(text).not.toContain("not-the-secret");
  });

  it("reads an object put while it runs, and reports a corrupt one while reading the rest", async () => {
    await put(corruptKey, corrupt);
    for (const [key, body] of Object.entries(later)) await put(key, body);
    const status = await until("the new objects read", async () => {
      const s = (await sources())["eks-prod"];
      return s.objects.read + s.objects.problems === 4 ? s : undefined;
    });
    expect(status.objects).toEqual({ read: 3, problems: 1, skipped: 0 });
    expect(status.error).toBeNull();
    const troubled = status.troubled.map((o) => [o.key, o.outcome]);
    expect(troubled).toEqual([[corruptKey, "problems"]]);
    expect(status.troubled[0].detail).toMatch(/could not be read \(first at line \d+: reading stopped: /);
    const all = { ...objects, ...later };
    for (const [key, body] of Object.entries(later)) writeFileSync(join(objectDir, key.replaceAll("/", "_")), body);
    const truth = countPy(Object.keys(all).map((key) => join(objectDir, key.replaceAll("/", "_"))));
    // The whole log, once: the corrupt object's readable start repeats requests already stored.
    expect(truth.requests).toBe(countPy([OWN_LOG]).requests);
    expect(stored().requests).toBe(truth.requests);
    const clients = await (await fetch(`${app.url}/api/clients?from=2026-12-02T00:00:00Z&to=2026-12-03T00:00:00Z&cluster=prod`)).json();
    expect(clients.data.total).toBe(truth.requests);
  });

  it("after a restart, reads nothing twice and goes on polling", async () => {
    const before = readTimes();
    const storedBefore = stored();
    const pollsBefore = (await sources())["eks-prod"].polls;
    await app.stop();
    app = await startApp(env);
    await until("a poll after the restart", async () => ((await sources())["eks-prod"].polls >= pollsBefore + 2 ? true : undefined));
    expect(readTimes()).toEqual(before);
    expect(stored()).toEqual(storedBefore);
    expect(app.running.output()).not.toMatch(/audit source eks-prod: read \d+ object/);
  });
});
