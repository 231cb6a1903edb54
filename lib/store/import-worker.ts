/**
 * Builds a snapshot's object store in a thread of its own: unpacking the replay and running its
 * 104,000 writes through the recorder's core takes about 5 s, and no request (nor a liveness probe)
 * should wait behind it.
 */
import { workerData } from "node:worker_threads";
import { postOutcome } from "../runtime/threads";
import { buildSnapshotStore, type ImportJob } from "./snapshot-store";

/** What the thread answers: how many writes it stored. */
export type ImportedCount = number;

void postOutcome((): Promise<ImportedCount> => buildSnapshotStore(workerData as ImportJob));
