/**
 * The audit spool's drain in a thread of its own, on its own connection to the live store: classifying a batch
 * takes tens of milliseconds, and neither the webhook's next answer nor a probe should wait behind it. It drains
 * what a stop left at once, then whenever the server says a batch was spooled (or every second).
 */
import { parentPort, workerData } from "node:worker_threads";
import type { Profile } from "../churn/profiles";
import type { ThreadMessage } from "../runtime/threads";
import { WriteStore } from "../store/store";
import { SpoolDrain, type DrainedBatch } from "./spool-drain";

const { dir, storePath, profiles, retentionMs } = workerData as { dir: string; storePath: string; profiles: Profile[]; retentionMs: number };
const post = (message: ThreadMessage<never, DrainedBatch>) => parentPort?.postMessage(message);
const drain = new SpoolDrain(dir, new WriteStore(storePath), profiles, retentionMs);

let wake: (() => void) | undefined;
parentPort?.on("message", () => wake?.());

async function run(): Promise<void> {
  for (;;) {
    try {
      drain.drainAll((batch) => post({ progress: batch }));
    } catch (error) {
      // A locked or full store: the batch stays spooled and is tried again.
      post({ error: `draining the audit spool: ${(error as Error).message}`, code: (error as { code?: unknown }).code });
    }
    await new Promise<void>((resolve) => {
      wake = resolve;
      setTimeout(resolve, 1000).unref();
    });
    wake = undefined;
  }
}

void run();
