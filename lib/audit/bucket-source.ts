/**
 * An audit bucket source's I/O shell: lists the bucket (S3 or S3-compatible, through the AWS SDK), reads each object
 * the plan (bucket.ts) names once, streamed through the reader into the source's ingester, and keeps the checkpoint
 * in the store after the object is stored. A crash between the two reads that object again, which adds nothing (a
 * request is stored once by its auditID and stage). What could not be read is tried again at the next poll.
 */
import { GetObjectCommand, ListObjectsV2Command, S3Client } from "@aws-sdk/client-s3";
import type { Profile } from "../churn/profiles";
import type { AuditSourceConfig } from "../config/load";
import { formatBytes } from "../format/number";
import type { BucketCheckpoints } from "../store/bucket-checkpoints";
import type { WriteStore } from "../store/store";
import { listAfterOf, planPoll, type ListedObject } from "./bucket";
import { AuditIngester } from "./ingest";
import { readStreamLines } from "./reader";

/** objects one poll lists at most (a thousand a request); the next poll lists on from where this one settled */
const MAX_LISTED = 100_000;
/** bodies of recently written objects the source's ingester keeps between objects */
const RECENT_BYTES = 16 * 1024 * 1024;
const CONNECT_TIMEOUT_MS = 5_000;
/** a request, or a pause in an object's body, longer than this fails (and is tried again at the next poll) */
const REQUEST_TIMEOUT_MS = 60_000;

export interface BucketPollResult {
  source: string;
  listed: number;
  read: number;
  bytes: number;
  /** the first thing that failed, in words for the status and the log; no endpoint or credential in it */
  error?: string;
}

export class BucketSource {
  private readonly client: S3Client;
  private readonly checkpoints: BucketCheckpoints;
  private ingester?: AuditIngester;

  constructor(
    readonly config: AuditSourceConfig,
    /** its place in audit.sources, for messages that name a setting */
    private readonly index: number,
    private readonly store: WriteStore,
    private readonly profiles: Profile[],
    private readonly retentionMs: number,
    private readonly guard?: () => Promise<void>,
  ) {
    this.client = new S3Client({
      region: config.region,
      forcePathStyle: config.forcePathStyle,
      maxAttempts: 2,
      requestHandler: { connectionTimeout: CONNECT_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS },
      ...(config.endpoint ? { endpoint: config.endpoint } : {}),
      ...(config.credentials ? { credentials: config.credentials } : {}),
    });
    this.checkpoints = store.buckets();
  }

  /** One poll: list, read what is new, record how it went. */
  async poll(nowMs = Date.now()): Promise<BucketPollResult> {
    const { name } = this.config;
    const retainedFromMs = nowMs - this.retentionMs;
    const result: BucketPollResult = { source: name, listed: 0, read: 0, bytes: 0 };
    let listed: ListedObject[];
    try {
      listed = await this.list((await this.checkpoints.source(name))?.listAfter ?? undefined);
    } catch (error) {
      result.error = this.describe(error, "listing the bucket");
      await this.checkpoints.recordPoll(name, nowMs, { listed: 0, listAfter: null, error: result.error });
      return result;
    }
    result.listed = listed.length;
    const plan = planPoll(listed, await this.checkpoints.doneEtags(name, listed[0]?.key), retainedFromMs);
    const failed = new Set<string>();
    for (const object of plan.toRead) {
      try {
        await this.read(object);
        result.read++;
        result.bytes += object.size;
      } catch (error) {
        failed.add(object.key);
        result.error ??= this.describe(error, `reading ${object.key}`);
      }
    }
    const listAfter = listAfterOf(listed, (o) => !failed.has(o.key), Date.now(), retainedFromMs);
    await this.checkpoints.recordPoll(name, Date.now(), { listed: listed.length, listAfter, error: result.error ?? null });
    return result;
  }

  private async list(startAfter: string | undefined): Promise<ListedObject[]> {
    const objects: ListedObject[] = [];
    let token: string | undefined;
    do {
      const page = await this.client.send(
        new ListObjectsV2Command({
          Bucket: this.config.bucket,
          ...(this.config.prefix ? { Prefix: this.config.prefix } : {}),
          ...(token ? { ContinuationToken: token } : startAfter ? { StartAfter: startAfter } : {}),
        }),
      );
      for (const c of page.Contents ?? [])
        if (c.Key && !c.Key.endsWith("/")) objects.push({ key: c.Key, etag: c.ETag ?? "", size: c.Size ?? 0, modifiedMs: c.LastModified?.getTime() ?? 0 });
      token = page.IsTruncated ? page.NextContinuationToken : undefined;
    } while (token && objects.length < MAX_LISTED);
    return objects;
  }

  /** Reads one object into the store, then records it as done; throws what should be tried again. */
  private async read(object: ListedObject): Promise<void> {
    const record = { key: object.key, etag: object.etag, size: object.size, modifiedMs: object.modifiedMs };
    if (object.size > this.config.maxObjectBytes) {
      const detail = `${formatBytes(object.size)}, larger than audit.sources[${this.index}].maxObjectMiB: not read`;
      await this.checkpoints.recordObject(this.config.name, { ...record, readMs: Date.now(), outcome: "skipped", detail, requests: 0 });
      return;
    }
    // IfMatch: the version listed, or a failure (412) when it was rewritten since; the next poll lists the new one.
    const response = await this.client.send(new GetObjectCommand({ Bucket: this.config.bucket, Key: object.key, IfMatch: object.etag || undefined }));
    const ingester = await this.ingesterFor();
    ingester.pruned = await this.store.pruneIfDue(this.retentionMs);
    // An object read again (its body failed halfway) counts only the calls on lines not counted before.
    await ingester.beginSource(`bucket:${this.config.name}/${object.key}@${object.etag}`);
    // A body that fails, or ends short of its length, is the connection's fault, not the object's: thrown, so the
    // object is read again. A reader that stops early (a damaged gzip) is the object's: read with problems.
    const stream = response.Body as AsyncIterable<Uint8Array> & { destroy?: () => void };
    let bodyError: unknown;
    let bodyBytes = 0;
    let bodyEnded = false;
    async function* body(): AsyncGenerator<Buffer> {
      try {
        for await (const chunk of stream) {
          bodyBytes += chunk.length;
          yield Buffer.isBuffer(chunk) ? chunk : Buffer.from(chunk);
        }
        bodyEnded = true;
      } catch (error) {
        bodyError = error;
        throw error;
      }
    }
    try {
      await readStreamLines(ingester.reader, body(), `s3://${this.config.bucket}/${object.key}`);
    } finally {
      stream.destroy?.();
    }
    await ingester.flush();
    if (bodyError) throw bodyError;
    const expected = response.ContentLength ?? object.size;
    if (bodyEnded && bodyBytes < expected) throw new Error(`the object's body ended after ${bodyBytes} of ${expected} bytes`);
    const { counts, problems } = ingester;
    const unread = counts.malformed + counts.invalid;
    const stored = `${counts.requests} write request${counts.requests === 1 ? "" : "s"} stored`;
    const first = problems[0];
    const detail =
      unread > 0
        ? `${unread} ${unread === 1 ? "line or event" : "lines or events"} could not be read${first ? ` (first at line ${first.line}: ${first.message})` : ""}; ${stored}`
        : ingester.summary();
    await this.checkpoints.recordObject(this.config.name, {
      ...record,
      readMs: Date.now(),
      outcome: unread > 0 ? "problems" : "read",
      detail,
      requests: counts.requests,
    });
  }

  /** One ingester for the source, kept between objects for what it knows of the objects' versions. */
  private async ingesterFor(): Promise<AuditIngester> {
    if (this.ingester) await this.ingester.newRun();
    else this.ingester = new AuditIngester(this.store, this.config.cluster, this.profiles, RECENT_BYTES, this.guard);
    return this.ingester;
  }

  /** What failed, in words that name the setting to look at and carry neither the endpoint nor a credential. */
  private describe(error: unknown, doing: string): string {
    const e = error as { name?: string; code?: string; message?: string; $metadata?: { httpStatusCode?: number } };
    const status = e.$metadata?.httpStatusCode;
    const setting = `audit.sources[${this.index}].s3`;
    const credentials = this.config.credentials
      ? `${setting}.accessKeyId and .secretAccessKey`
      : "the AWS credential chain (environment, web identity, the instance's role)";
    const named = e.name && e.name !== "Error" ? e.name : undefined;
    if (["InvalidAccessKeyId", "SignatureDoesNotMatch", "InvalidToken", "ExpiredToken", "AccessDenied", "Forbidden"].includes(named ?? "") || status === 403)
      return `${doing}: the bucket refused the credentials (${named ?? "403"}): check ${credentials} and the bucket's policy; tried again at the next poll`;
    if (named === "NoSuchBucket") return `${doing}: there is no bucket ${this.config.bucket} (${setting}.bucket)`;
    if (named === "CredentialsProviderError")
      return `${doing}: no AWS credentials found: set ${setting}.accessKeyId and .secretAccessKey, or give the pod a role`;
    if (e.code && /^E[A-Z]+$/.test(e.code)) return `${doing}: could not reach the bucket's endpoint (${e.code}); tried again at the next poll`;
    if (named === "TimeoutError") return `${doing}: the bucket did not answer in time; tried again at the next poll`;
    let message = (e.message ?? String(error)).slice(0, 300);
    if (this.config.endpoint) message = message.split(this.config.endpoint).join("<endpoint>");
    return `${doing}: ${named ? `${named}${status ? ` (${status})` : ""}: ` : ""}${message}`;
  }
}
