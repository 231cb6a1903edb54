/**
 * The audit intake thread's body (intake-thread.ts): the spool's drain, at once for what a stop left, then whenever
 * the server says a batch was spooled (or every second); and each bucket source's polls, every pollSeconds. Both
 * write through the one connection this thread holds; each object and each batch is its own transactions.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Profile } from "../churn/profiles";
import type { AuditSourceConfig } from "../config/load";
import type { ThreadMessage } from "../runtime/threads";
import { WriteStore } from "../store/store";
import { BucketSource, type BucketPollResult } from "./bucket-source";
import { SpoolDrain, type DrainedBatch } from "./spool-drain";

export type IntakeProgress = { batch: DrainedBatch } | { poll: BucketPollResult };

const { dir, storePath, profiles, retentionMs, sources } = workerData as {
  dir: string;
  storePath: string;
  profiles: Profile[];
  retentionMs: number;
  sources: AuditSourceConfig[];
};
const post = (message: ThreadMessage<never, IntakeProgress>) => parentPort?.postMessage(message);
const store = new WriteStore(storePath);
const drain = new SpoolDrain(dir, store, profiles, retentionMs);

const sleep = (ms: number, wake?: (resolve: () => void) => void) =>
  new Promise<void>((resolve) => {
    wake?.(resolve);
    setTimeout(resolve, ms).unref();
  });

let wakeDrain: (() => void) | undefined;
parentPort?.on("message", () => wakeDrain?.());

async function drainSpool(): Promise<void> {
  for (;;) {
    try {
      drain.drainAll((batch) => post({ progress: { batch } }));
    } catch (error) {
      // A locked or full store: the batch stays spooled and is tried again.
      post({ error: `draining the audit spool: ${(error as Error).message}`, code: (error as { code?: unknown }).code });
    }
    await sleep(1000, (resolve) => (wakeDrain = resolve));
    wakeDrain = undefined;
  }
}

async function pollSource(source: BucketSource): Promise<void> {
  for (;;) {
    const startedMs = Date.now();
    let result: BucketPollResult;
    try {
      result = await source.poll(startedMs);
    } catch (error) {
      // The store itself failed (locked, full): said, and the poll tried again.
      result = { source: source.config.name, listed: 0, read: 0, bytes: 0, error: `storing what was read: ${(error as Error).message}` };
    }
    post({ progress: { poll: result } });
    await sleep(Math.max(0, source.config.pollMs - (Date.now() - startedMs)));
  }
}

void drainSpool();
sources.forEach((config, index) => void pollSource(new BucketSource(config, index, store, profiles, retentionMs)));
