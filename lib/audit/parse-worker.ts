/**
 * The reader in a thread of its own (threaded.ts bundles and starts it): reads one file and posts
 * its completed write requests in batches, each response body as JSON text, so the ingester's
 * thread parses a body only when its version is new. It reads ahead at most a few batches.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { AuditRequest } from "./event";
import { AuditReader, readFileLines } from "./reader";

/** Batches posted and not yet taken by the ingester before reading pauses. */
const READ_AHEAD = 32;

export interface WorkerBatch {
  requests: AuditRequest[];
  sizes: number[];
  bytesRead: number;
}

async function main() {
  const { path, label } = workerData as { path: string; label: string };
  const port = parentPort!;
  let requests: AuditRequest[] = [];
  let sizes: number[] = [];
  const reader = new AuditReader((request, bytes) => {
    const response = request.response;
    if (response?.object !== undefined) {
      response.json = JSON.stringify(response.object);
      response.object = undefined;
    }
    requests.push(request);
    sizes.push(bytes);
  });
  let credits = READ_AHEAD;
  let wake: (() => void) | undefined;
  port.on("message", () => {
    credits++;
    wake?.();
  });
  await readFileLines(reader, path, label, async (bytesRead) => {
    while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
    credits--;
    port.postMessage({ requests, sizes, bytesRead } satisfies WorkerBatch);
    requests = [];
    sizes = [];
  });
  port.postMessage({ done: true, counts: reader.counts, problems: reader.problems });
}

void main();
