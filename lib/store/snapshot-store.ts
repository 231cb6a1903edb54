/**
 * A snapshot's object store, built from its bundle through the recorder's own core (import-writes.ts), with its
 * audit requests (audit-bundle.ts), and marked with a digest of what built it (the bundle, the store's format,
 * the profiles), so a store built from another bundle, by an older Churnscope or with other profiles is built again. The replay's is built
 * once at build time (lib/cli/replay-store.ts) beside the app, and a server whose data directory has none
 * takes a copy of it instead of building its own; so does a snapshot whose writes and requests are the replay's
 * (a download of the replay with a note or a view of its own, opened again).
 */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import type { Profile } from "../churn/profiles";
import { bufferOf } from "../runtime/threads";
import { decodeSnapshot } from "../snapshot/format/codec";
import type { Snapshot } from "../snapshot/format/schema";
import { importApiCalls } from "./api-calls-bundle";
import { importAuditRequests } from "./audit-bundle";
import { importObjectWrites } from "./import-writes";
import { WriteStore } from "./store";

export interface ImportJob {
  path: string;
  bundle: Uint8Array;
  maxBytes: number;
  profiles: Profile[];
  digest: string;
}

/** Changes whenever what a store holds for the same bundle would: the schema, or how writes are classified. */
const STORE_FORMAT = "6";

export function snapshotStoreDigest(bundle: Uint8Array, profiles: Profile[]): string {
  return createHash("sha256").update(bundle).update(STORE_FORMAT).update(JSON.stringify(profiles)).digest("hex").slice(0, 16);
}

/** The same for what the store is built from alone: bundles that differ only in their notes, markers or view give the same. */
export function storeContentDigest(snapshot: Pick<Snapshot, "objectWrites" | "auditRequests" | "apiCalls">, profiles: Profile[]): string {
  const hash = createHash("sha256")
    .update(JSON.stringify(snapshot.objectWrites))
    .update("\u0000")
    .update(JSON.stringify(snapshot.auditRequests ?? null))
    .update("\u0000")
    .update(JSON.stringify(snapshot.apiCalls ?? null));
  return hash.update(STORE_FORMAT).update(JSON.stringify(profiles)).digest("hex").slice(0, 16);
}

/**
 * Builds the store at `path`, or takes a copy of the prebuilt replay store when that was built from the same writes and
 * requests (`adopt`); it is marked with its digest only once complete, so a build cut short is built again.
 */
export async function buildSnapshotStore(job: ImportJob, adopt = true): Promise<number> {
  const snapshot = decodeSnapshot(bufferOf(job.bundle), job.maxBytes);
  const content = storeContentDigest(snapshot, job.profiles);
  const store = adopt && adoptPrebuilt(job.path, content, "content") ? await WriteStore.open(job.path) : await built(job, snapshot, content);
  try {
    await store.setMeta("digest", job.digest);
    return Number(await store.getMeta("writes"));
  } finally {
    await store.close();
  }
}

async function built(job: ImportJob, { objectWrites, auditRequests, apiCalls }: Snapshot, content: string): Promise<WriteStore> {
  const store = await WriteStore.open(job.path);
  try {
    await store.setMeta("writes", String(objectWrites ? await importObjectWrites(store, objectWrites, job.profiles) : 0));
    await store.setMeta("auditRequests", String(auditRequests ? await importAuditRequests(store, auditRequests, apiCalls === undefined) : 0));
    await store.setMeta("apiCallRows", String(apiCalls ? await importApiCalls(store, apiCalls) : 0));
    await store.setMeta("content", content);
    return store;
  } catch (error) {
    await store.close();
    throw error;
  }
}

/**
 * Builds the replay's store into `distDir` (`npm run build`'s last step), marked with both digests; answers how many
 * writes it holds, or null when the one there was built from the same bundle and profiles already.
 */
export async function buildPrebuiltStore(bundle: Uint8Array, profiles: Profile[], distDir: string): Promise<number | null> {
  const target = prebuiltReplayStore(distDir);
  const digest = snapshotStoreDigest(bundle, profiles);
  if (builtFrom([target.path, target.contentPath], target.digestPath, digest)) return null;
  const building = `${target.path}.building`;
  for (const suffix of ["", "-wal", "-shm"]) rmSync(`${building}${suffix}`, { force: true });
  mkdirSync(dirname(target.path), { recursive: true });
  const writes = await buildSnapshotStore({ path: building, bundle, maxBytes: 64 << 20, profiles, digest }, false);
  // Says where a data directory's copy came from.
  const store = await WriteStore.open(building);
  await store.setMeta("built", "at build time");
  const content = await store.getMeta("content");
  await store.close();
  renameSync(building, target.path);
  writeFileSync(target.digestPath, `${digest}\n`);
  writeFileSync(target.contentPath, `${content}\n`);
  return writes;
}

/**
 * Whether `paths` and `digestPath` exist and the digest file says `digest`. Paths in the build output, which the
 * standalone build copies itself (replay-store.ts): the file tracer would take them for any path in the project and
 * copy the whole checkout (tests, docs) beside the server.
 */
function builtFrom(paths: string[], digestPath: string, digest: string): boolean {
  return (
    [...paths, digestPath].every((path) => existsSync(/*turbopackIgnore: true*/ path)) &&
    readFileSync(/*turbopackIgnore: true*/ digestPath, "utf8").trim() === digest
  );
}

/** Where the build leaves the replay's store: beside the app's build output (`.next`, or CHURNSCOPE_DIST_DIR), with its digests. */
export function prebuiltReplayStore(distDir = process.env.CHURNSCOPE_DIST_DIR || ".next"): { path: string; digestPath: string; contentPath: string } {
  const path = join(distDir, "replay-objects.sqlite");
  return { path, digestPath: `${path}.digest`, contentPath: `${path}.content` };
}

/**
 * Copies the prebuilt replay store to `path` when it was built from what this server would build it from: the same
 * bundle (`digest`), or the same writes and requests (`content`); answers whether it did.
 */
export function adoptPrebuilt(path: string, digest: string, by: "bundle" | "content" = "bundle"): boolean {
  const prebuilt = prebuiltReplayStore();
  const digestPath = by === "bundle" ? prebuilt.digestPath : prebuilt.contentPath;
  if (!builtFrom([prebuilt.path], digestPath, digest)) return false;
  // Copied whole, then renamed: a copy cut short is never taken for a store.
  copyFileSync(prebuilt.path, `${path}.copying`);
  renameSync(`${path}.copying`, path);
  return true;
}
