/**
 * Reading audit logs from a bucket against reading the same objects from disk: OBJECTS (default 32) Firehose-shaped
 * objects (gzip members run together, each a CloudWatch Logs subscription message of 100 Metadata-level events:
 * HTTPRoute updates sent against the version read) on a real S3 server (Versity Gateway, test/tools/build.sh), read
 * by one poll of a bucket source into a fresh store; the peer, in the same run: the same bytes as files, read by
 * ingestFile into another fresh store with the same profiles. Both in this process, alternated ROUNDS (2) times, each
 * store checked to hold every completed request once.
 * Run: npx tsx test/bench/bucket-read.ts
 */
import { CreateBucketCommand, PutObjectCommand } from "@aws-sdk/client-s3";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { BucketSource } from "@/lib/audit/bucket-source";
import { ingestFile } from "@/lib/audit/files";
import { AuditIngester } from "@/lib/audit/ingest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { WriteStore } from "@/lib/store/store";
import { preconditionStorm } from "../helpers/audit-log";
import { startS3, type TestS3 } from "../helpers/s3-server";
import { report, round } from "./report";
import { scratchDir } from "./scratch";

const OBJECTS = Number(process.env.OBJECTS ?? 32);
const ROUTES_PER_OBJECT = 4;
const STEPS = 2_000;
const MESSAGE_EVENTS = 100;
const RETENTION_MS = 3650 * 86_400_000;

function objectBody(index: number): { body: Buffer; rawBytes: number; completed: number } {
  const lines = Array.from(
    { length: ROUTES_PER_OBJECT },
    (_, r) => preconditionStorm(Date.UTC(2026, 11, 1), STEPS, index * ROUTES_PER_OBJECT + r + 1, `route-${index}-${r}`).lines,
  ).flat();
  const members: Buffer[] = [];
  let rawBytes = 0;
  for (let i = 0; i < lines.length; i += MESSAGE_EVENTS) {
    const message = JSON.stringify({
      messageType: "DATA_MESSAGE",
      logGroup: "/aws/eks/bench/cluster",
      logStream: "kube-apiserver-audit-bench",
      logEvents: lines.slice(i, i + MESSAGE_EVENTS).map((line, j) => ({ id: String(i + j), timestamp: 0, message: line })),
    });
    rawBytes += message.length;
    members.push(gzipSync(message));
  }
  return { body: Buffer.concat(members), rawBytes, completed: lines.filter((l) => l.includes('"stage":"ResponseComplete"')).length };
}

const ROUNDS = Number(process.env.ROUNDS ?? 2);
const best = (seconds: number[]) => Math.min(...seconds);

/** Checks a store holds every completed request once, and closes it. */
async function checked(store: WriteStore, completed: number, what: string): Promise<void> {
  const stored = (await store.database.sql().get<{ n: number }>("SELECT COUNT(*) AS n FROM audit_requests"))!.n;
  await store.close();
  if (stored !== completed) throw new Error(`${what} stored ${stored} of ${completed} completed requests`);
}

async function readFromBucket(s3: TestS3, work: string, round: number, completed: number): Promise<number> {
  const store = await WriteStore.open(join(work, `bucket-${round}.sqlite`));
  const source = new BucketSource(
    {
      name: "bench",
      cluster: "bench",
      bucket: "bench",
      prefix: "AWSLogs/",
      endpoint: s3.endpoint,
      region: "us-east-1",
      forcePathStyle: true,
      credentials: { accessKeyId: s3.accessKeyId, secretAccessKey: s3.secretAccessKey },
      pollMs: 60_000,
      maxObjectBytes: 1 << 30,
    },
    0,
    store,
    DEFAULT_PROFILES,
    RETENTION_MS,
  );
  const startedMs = performance.now();
  const poll = await source.poll();
  const seconds = (performance.now() - startedMs) / 1000;
  if (poll.error || poll.read !== OBJECTS) throw new Error(`the poll read ${poll.read} of ${OBJECTS} objects: ${poll.error ?? ""}`);
  await checked(store, completed, "the bucket source");
  return seconds;
}

async function readFromDisk(objects: { key: string }[], work: string, round: number, completed: number): Promise<number> {
  const store = await WriteStore.open(join(work, `disk-${round}.sqlite`));
  const ingester = new AuditIngester(store, "bench", DEFAULT_PROFILES);
  const startedMs = performance.now();
  for (const o of objects) await ingestFile(ingester, join(work, o.key.replaceAll("/", "_")));
  const seconds = (performance.now() - startedMs) / 1000;
  await checked(store, completed, "ingestFile");
  return seconds;
}

async function main(): Promise<void> {
  const objects = Array.from({ length: OBJECTS }, (_, i) => ({ key: `AWSLogs/bench/${String(i).padStart(4, "0")}.gz`, ...objectBody(i) }));
  const compressed = objects.reduce((n, o) => n + o.body.length, 0);
  const raw = objects.reduce((n, o) => n + o.rawBytes, 0);
  const completed = objects.reduce((n, o) => n + o.completed, 0);
  const work = scratchDir("bucket");
  const s3 = await startS3();
  try {
    await s3.client.send(new CreateBucketCommand({ Bucket: "bench" }));
    for (const o of objects) {
      await s3.client.send(new PutObjectCommand({ Bucket: "bench", Key: o.key, Body: o.body }));
      writeFileSync(join(work, o.key.replaceAll("/", "_")), o.body);
    }

    // Alternated, ROUNDS times each, the best kept: neither gets the warmer JIT or the quieter machine alone.
    const bucketSeconds: number[] = [];
    const diskSeconds: number[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      diskSeconds.push(await readFromDisk(objects, work, round, completed));
      bucketSeconds.push(await readFromBucket(s3, work, round, completed));
    }
    const mbps = (bytes: number, seconds: number) => round(bytes / 1_048_576 / seconds, 1);
    report({
      bench: "bucket-read",
      objects: OBJECTS,
      compressedMiB: round(compressed / 1_048_576, 1),
      rawMiB: round(raw / 1_048_576, 1),
      completedRequests: completed,
      rounds: ROUNDS,
      bucket: {
        seconds: bucketSeconds.map((x) => round(x)),
        compressedMiBps: mbps(compressed, best(bucketSeconds)),
        rawMiBps: mbps(raw, best(bucketSeconds)),
        requestsPerSecond: Math.round(completed / best(bucketSeconds)),
      },
      peer: {
        what: "the same objects as files, ingestFile",
        seconds: diskSeconds.map((x) => round(x)),
        compressedMiBps: mbps(compressed, best(diskSeconds)),
        rawMiBps: mbps(raw, best(diskSeconds)),
      },
      bucketVsDisk: round(best(diskSeconds) / best(bucketSeconds)),
      storedOnce: true,
    });
  } finally {
    await s3.stop();
  }
}

void main().catch((error) => {
  console.error(error);
  process.exit(1);
});
