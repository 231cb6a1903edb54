/**
 * The audit intake thread's body (intake-thread.ts): the spool's drain, at once for what a stop left, then whenever
 * the server says a batch was spooled (or every second); and each bucket source's polls, every pollSeconds. Both
 * write through the one connection this thread holds; each object and each batch is its own transactions.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Profile } from "../churn/profiles";
import type { AuditSourceConfig } from "../config/load";
import type { ThreadMessage } from "../runtime/threads";
import { join } from "node:path";
import { leadCluster } from "../recorder/leadership";
import type { StoreTarget } from "../store/database";
import { LeaseLost } from "../store/leases";
import { WriteStore } from "../store/store";
import { BucketSource, type BucketPollResult } from "./bucket-source";
import { fileSpool, SpoolDrain, tableSpool, type DrainedBatch, type SpoolSource } from "./spool-drain";

export type IntakeProgress = { batch: DrainedBatch } | { poll: BucketPollResult };

/** The lease (leases.ts) of the process that drains the shared webhook spool and reads the buckets. */
export const AUDIT_INTAKE_LEASE = "audit-intake";

const {
  dir,
  store: target,
  profiles,
  retentionMs,
  sources,
} = workerData as {
  dir: string;
  store: StoreTarget;
  profiles: Profile[];
  retentionMs: number;
  sources: AuditSourceConfig[];
};
const post = (message: ThreadMessage<never, IntakeProgress>) => parentPort?.postMessage(message);

const sleep = (ms: number, wake?: (resolve: () => void) => void) =>
  new Promise<void>((resolve) => {
    wake?.(resolve);
    setTimeout(resolve, ms).unref();
  });

let wakeDrain: (() => void) | undefined;
parentPort?.on("message", () => wakeDrain?.());

/** Whether a loop should go on: until its intake stops (this process no longer leads it). */
type Running = () => boolean;

async function drainSpool(drain: SpoolDrain, running: Running): Promise<void> {
  while (running()) {
    try {
      await drain.drainAll((batch) => post({ progress: { batch } }));
    } catch (error) {
      if (error instanceof LeaseLost || !running()) return;
      // A locked or full store: the batch stays spooled and is tried again.
      post({ error: `draining the audit spool: ${(error as Error).message}`, code: (error as { code?: unknown }).code });
    }
    await sleep(1000, (resolve) => (wakeDrain = resolve));
    wakeDrain = undefined;
  }
}

async function pollSource(source: BucketSource, running: Running): Promise<void> {
  while (running()) {
    const startedMs = Date.now();
    let result: BucketPollResult;
    try {
      result = await source.poll(startedMs);
    } catch (error) {
      if (error instanceof LeaseLost || !running()) return;
      // The store itself failed (locked, full): said, and the poll tried again.
      result = { source: source.config.name, listed: 0, read: 0, bytes: 0, error: `storing what was read: ${(error as Error).message}` };
    }
    post({ progress: { poll: result } });
    await sleep(Math.max(0, source.config.pollMs - (Date.now() - startedMs)));
  }
}

/** The spool's drain and the buckets' polls, until the returned stop. */
function runIntake(store: WriteStore, spool: SpoolSource, guard?: () => Promise<void>): () => Promise<void> {
  let on = true;
  const running = () => on;
  const loops = [
    drainSpool(new SpoolDrain(spool, store, profiles, retentionMs, guard), running),
    ...sources.map((config, index) => pollSource(new BucketSource(config, index, store, profiles, retentionMs, guard), running)),
  ];
  return async () => {
    on = false;
    wakeDrain?.();
    await Promise.all(loops);
  };
}

void WriteStore.open(target).then(
  (store) => {
    // One process's spool is its files. Replicas on PostgreSQL share the spool's table and the buckets: the one that
    // holds the intake's lease reads them, so that one memory of the objects' versions classifies every write.
    if (!store.database.engine.sharedByReplicas) return void runIntake(store, fileSpool(dir));
    leadCluster(
      store.leases(),
      AUDIT_INTAKE_LEASE,
      (guard) => runIntake(store, tableSpool(store, join(dir, "failed")), guard),
      (line) => post({ error: line }),
    );
  },
  (error: Error) => post({ error: `opening the store: ${error.message}` }),
);
