/**
 * Audit logs arriving over HTTP: the kube-apiserver's audit webhook (EventList batches, its own token), spooled to
 * disk and answered at once, and uploads from the UI (streamed to disk under the size limit, then read like a file).
 * Both go through the same ingester as `npm run ingest`, into the live store.
 */
import { randomUUID } from "node:crypto";
import { once } from "node:events";
import { createWriteStream, mkdirSync, readdirSync, rmSync, statSync } from "node:fs";
import { join } from "node:path";
import { ApiFailure, badRequest } from "../../api/envelope";
import { readBodyLimited, readLimited } from "../../api/read-body";
import { CLUSTER_NAME } from "../../config/schema";
import { formatBytes } from "../../format/number";
import { sameSecret } from "../access";
import type { ApiRequest } from "../api-request";
import type { ServerContext } from "../context";
import { tooLarge } from "../../snapshot/format/codec";
import { eventsOf } from "../../audit/event";
import { ingestFile } from "../../audit/files";
import { AuditIngester } from "../../audit/ingest";
import { auditIntake, type AuditIntake } from "../../audit/intake-thread";
import { liveStoreTarget } from "../../store/sources";
import type { IngestAnswer, WebhookAnswer } from "../../wire/audit";

function clusterParam(query: Record<string, string>, fromPath?: string): string {
  const cluster = fromPath ?? query.cluster ?? "default";
  if (!CLUSTER_NAME.test(cluster) || cluster.length > 63)
    throw badRequest(`parameter cluster: expected a DNS-style name such as prod-eu, got ${JSON.stringify(cluster.slice(0, 80))}`);
  return cluster;
}

function answer(ctx: ServerContext, ingester: AuditIngester, cluster: string, bytes: number, startedMs: number): { data: IngestAnswer; warnings: string[] } {
  const { counts, problems } = ingester;
  const retention = ingester.retentionWarning(ctx.config.recorder.retentionDays * 86_400_000);
  const warnings = [
    ...(retention ? [retention] : []),
    ...(counts.malformed + counts.invalid > 0
      ? [`${counts.malformed + counts.invalid} lines or events could not be read; the first ones are listed under problems.`]
      : []),
    ...(counts.events === 0
      ? ["No audit events found: expected audit.k8s.io Events as JSON (one per line, printed over lines, or in an envelope), plain or .gz."]
      : []),
  ];
  return { data: { cluster, bytes, seconds: (Date.now() - startedMs) / 1000, counts, problems, summary: ingester.summary() }, warnings };
}

/** An ingester into the live store, which keeps `recorder.retentionDays` of writes whether or not a recorder runs. */
async function newIngester(ctx: ServerContext, cluster: string, recentBytes?: number): Promise<AuditIngester> {
  const store = ctx.stores.liveStore();
  const ingester = new AuditIngester(store, cluster, ctx.config.profiles, recentBytes);
  // The retention pass due before an ingest, its counts kept for the ingester's summary.
  ingester.pruned = await store.pruneIfDue(ctx.config.recorder.retentionDays * 86_400_000);
  return ingester;
}

/** The audit intake thread (lib/audit/intake-thread.ts): the webhook's spool and the bucket sources, for this server's data directory. */
export function intake(ctx: ServerContext): AuditIntake {
  return auditIntake({
    dataDir: ctx.config.dataDir,
    store: liveStoreTarget(ctx.config, 2),
    ...(ctx.config.store.engine === "postgres" ? { table: ctx.stores.liveStore().webhookSpool() } : {}),
    maxSpoolBytes: ctx.config.audit.maxSpoolBytes,
    profiles: ctx.config.profiles,
    retentionMs: ctx.config.recorder.retentionDays * 86_400_000,
    sources: ctx.config.audit.sources,
  });
}

let lastTokenlessWarningMs = 0;

/**
 * POST /api/audit/webhook/NAME (or ?cluster=NAME) with `Authorization: Bearer <audit.webhookToken>`
 * and an EventList body. The path form is what a webhook kubeconfig's `server` can carry.
 */
export async function receiveWebhook(
  ctx: ServerContext,
  request: ApiRequest,
  query: Record<string, string>,
  clusterFromPath?: string,
): Promise<{ data: WebhookAnswer; warnings: string[] }> {
  const token = ctx.config.audit.webhookToken;
  if (!token) throw new ApiFailure(404, "not_found", "the audit webhook is off: set audit.webhookToken in the configuration");
  const [scheme, credentials = ""] = (request.headers.get("authorization") ?? "").split(/\s+/, 2);
  if (request.headers.get("authorization") === null) {
    // What a real kube-apiserver does when its webhook kubeconfig names an http:// server: it sends no token.
    // Said in the log once a minute at most (the API server retries every batch).
    if (Date.now() - lastTokenlessWarningMs > 60_000) {
      lastTokenlessWarningMs = Date.now();
      console.error(
        "churnscope: an audit webhook request came without a token; kube-apiserver sends its webhook token only over https (server.tls, or a TLS proxy in front)",
      );
    }
    throw new ApiFailure(
      401,
      "unauthorized",
      "the audit webhook needs Authorization: Bearer <audit.webhookToken>; kube-apiserver sends it only to an https:// server (see server.tls)",
    );
  }
  if (scheme?.toLowerCase() !== "bearer" || !sameSecret(credentials, token))
    throw new ApiFailure(401, "unauthorized", "the audit webhook needs Authorization: Bearer <audit.webhookToken>");
  const cluster = clusterParam(query, clusterFromPath);
  const startedMs = Date.now();
  const bytes = await readBodyLimited(request.body, ctx.config.audit.maxWebhookBytes, "audit.maxWebhookMiB");
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8"));
  } catch (error) {
    throw badRequest(`the batch is not JSON: ${(error as Error).message}`);
  }
  if (eventsOf(value) === null) throw badRequest("expected an audit.k8s.io EventList (or one Event), as the kube-apiserver audit webhook posts it");
  // Answered once it is on disk: the drain thread classifies it, in order, while the API server sends the next.
  const queued = await intake(ctx).accept(cluster, bytes);
  return { data: { cluster, bytes: bytes.length, seconds: (Date.now() - startedMs) / 1000, queued }, warnings: [] };
}

/** Streams a request body to `path`, never holding more than one chunk; past `maxBytes` the file is removed and 413 answered. */
async function streamToFile(body: ReadableStream<Uint8Array> | null, path: string, maxBytes: number): Promise<number> {
  if (!body) throw badRequest("the request has no body: send the audit log file as the request body");
  const out = createWriteStream(path);
  let total: number;
  try {
    total = await readLimited(body, maxBytes, "audit.maxUploadMiB; use npm run ingest for larger logs", async (chunk) => {
      // events.once takes its listeners off again, whichever event comes.
      if (!out.write(chunk)) await once(out, "drain");
    });
    await new Promise<void>((resolve, reject) => out.end((error?: Error | null) => (error ? reject(error) : resolve())));
  } catch (error) {
    out.destroy();
    rmSync(path, { force: true });
    throw error;
  }
  if (total === 0) {
    rmSync(path, { force: true });
    throw badRequest("the upload is empty");
  }
  return total;
}

/**
 * Uploads a crash left half-written (each is read and removed within the request that wrote it): removed
 * at start. Only files older than this process, so an upload that began meanwhile keeps its file.
 */
export function removeLeftUploads(dataDir: string, startedAtMs = Date.now() - process.uptime() * 1000): number {
  const dir = join(dataDir, "uploads");
  let names: string[];
  try {
    names = readdirSync(dir).filter((name) => name.endsWith(".upload") && statSync(join(dir, name)).mtimeMs < startedAtMs);
  } catch {
    return 0;
  }
  for (const name of names) rmSync(join(dir, name), { force: true });
  return names.length;
}

/** POST /api/audit/uploads?cluster=NAME with the log (plain or .gz) as the body. */
export async function receiveUpload(
  ctx: ServerContext,
  request: ApiRequest,
  query: Record<string, string>,
): Promise<{ data: IngestAnswer; warnings: string[] }> {
  const cluster = clusterParam(query);
  const declared = Number(request.headers.get("content-length") ?? "0");
  if (declared > ctx.config.audit.maxUploadBytes)
    throw tooLarge(
      `the upload is ${formatBytes(declared)}; at most ${formatBytes(ctx.config.audit.maxUploadBytes)} is accepted (audit.maxUploadMiB); use npm run ingest for larger logs`,
    );
  const dir = join(ctx.config.dataDir, "uploads");
  mkdirSync(dir, { recursive: true });
  const path = join(dir, `${randomUUID()}.upload`);
  const startedMs = Date.now();
  const bytes = await streamToFile(request.body, path, ctx.config.audit.maxUploadBytes);
  const ingester = await newIngester(ctx, cluster);
  try {
    await ingestFile(ingester, path, undefined, "upload");
  } finally {
    rmSync(path, { force: true });
  }
  return answer(ctx, ingester, cluster, bytes, startedMs);
}
