/**
 * Builds a snapshot's object store in a thread of its own: unpacking the replay and running its
 * 104,000 writes through the recorder's core takes about 5 s, and no request (nor a liveness probe)
 * should wait behind it. The store is marked with its digest only once it is complete, so a build
 * cut short is rebuilt.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Profile } from "../churn/profiles";
import { decodeSnapshot } from "../snapshot/codec";
import { importObjectWrites } from "./import-writes";
import { WriteStore } from "./store";

export interface ImportJob {
  path: string;
  bundle: Uint8Array;
  maxBytes: number;
  profiles: Profile[];
  digest: string;
}

/** How many writes it stored, or why it could not (with SQLite's code, so a full disk still answers 507). */
export type ImportOutcome = { count: number } | { error: string; code?: unknown };

const job = workerData as ImportJob;
const store = new WriteStore(job.path);
try {
  const objectWrites = decodeSnapshot(Buffer.from(job.bundle.buffer, job.bundle.byteOffset, job.bundle.byteLength), job.maxBytes).objectWrites;
  const count = objectWrites ? importObjectWrites(store, objectWrites, job.profiles) : 0;
  store.setMeta("writes", String(count));
  store.setMeta("digest", job.digest);
  parentPort?.postMessage({ count } satisfies ImportOutcome);
} catch (error) {
  parentPort?.postMessage({ error: error instanceof Error ? error.message : String(error), code: (error as { code?: unknown }).code } satisfies ImportOutcome);
} finally {
  store.close();
}
