/**
 * Builds a snapshot's object store in a thread of its own: unpacking the replay and running its
 * 104,000 writes through the recorder's core takes about 5 s, and no request (nor a liveness probe)
 * should wait behind it. The store is marked with its digest only once it is complete, so a build
 * cut short is rebuilt.
 */
import { workerData } from "node:worker_threads";
import type { Profile } from "../churn/profiles";
import { bufferOf, postOutcome } from "../runtime/threads";
import { decodeSnapshot } from "../snapshot/format/codec";
import { importObjectWrites } from "./import-writes";
import { WriteStore } from "./store";

export interface ImportJob {
  path: string;
  bundle: Uint8Array;
  maxBytes: number;
  profiles: Profile[];
  digest: string;
}

/** What the thread answers: how many writes it stored. */
export type ImportedCount = number;

const job = workerData as ImportJob;
void postOutcome((): ImportedCount => {
  const store = new WriteStore(job.path);
  try {
    const objectWrites = decodeSnapshot(bufferOf(job.bundle), job.maxBytes).objectWrites;
    const count = objectWrites ? importObjectWrites(store, objectWrites, job.profiles) : 0;
    store.setMeta("writes", String(count));
    store.setMeta("digest", job.digest);
    return count;
  } finally {
    store.close();
  }
});
