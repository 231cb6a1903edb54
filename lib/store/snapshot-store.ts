/**
 * A snapshot's object store, built from its bundle through the recorder's own core (import-writes.ts), with its
 * audit requests (audit-bundle.ts), and marked with a digest of what built it (the bundle, the store's format,
 * the profiles), so a store built from another bundle, by an older Churnscope or with other profiles is built again. The replay's is built
 * once at build time (lib/cli/replay-store.ts) beside the app, and a server whose data directory has none
 * takes a copy of it instead of building its own.
 */
import { createHash } from "node:crypto";
import { copyFileSync, existsSync, readFileSync, renameSync } from "node:fs";
import { join } from "node:path";
import type { Profile } from "../churn/profiles";
import { bufferOf } from "../runtime/threads";
import { decodeSnapshot } from "../snapshot/format/codec";
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

/** Builds the store at `path`; it is marked with its digest only once complete, so a build cut short is built again. */
export async function buildSnapshotStore(job: ImportJob): Promise<number> {
  const store = await WriteStore.open(job.path);
  try {
    const { objectWrites, auditRequests } = decodeSnapshot(bufferOf(job.bundle), job.maxBytes);
    const count = objectWrites ? await importObjectWrites(store, objectWrites, job.profiles) : 0;
    await store.setMeta("writes", String(count));
    await store.setMeta("auditRequests", String(auditRequests ? await importAuditRequests(store, auditRequests) : 0));
    await store.setMeta("digest", job.digest);
    return count;
  } finally {
    await store.close();
  }
}

/** Where the build leaves the replay's store: beside the app's build output (`.next`, or CHURNSCOPE_DIST_DIR), with its digest. */
export function prebuiltReplayStore(distDir = process.env.CHURNSCOPE_DIST_DIR || ".next"): { path: string; digestPath: string } {
  const path = join(distDir, "replay-objects.sqlite");
  return { path, digestPath: `${path}.digest` };
}

/** Copies the prebuilt replay store to `path` when it was built from what this server would build it from; answers whether it did. */
export function adoptPrebuilt(path: string, digest: string): boolean {
  const prebuilt = prebuiltReplayStore();
  if (!existsSync(prebuilt.path) || !existsSync(prebuilt.digestPath) || readFileSync(prebuilt.digestPath, "utf8").trim() !== digest) return false;
  // Copied whole, then renamed: a copy cut short is never taken for a store.
  copyFileSync(prebuilt.path, `${path}.copying`);
  renameSync(`${path}.copying`, path);
  return true;
}
