/**
 * Reading in a second thread for `npm run ingest`: the worker splits, skips and parses lines while
 * this thread classifies and stores, so a large log goes in at nearly the rate the store takes it.
 * The worker is TypeScript bundled on first use (esbuild, which tsx brings), because worker threads
 * do not inherit tsx's loader. The server (uploads) reads in its own thread instead (files.ts).
 */
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { buildSync } from "esbuild";
import type { AuditIngester } from "./ingest";
import type { WorkerBatch } from "./parse-worker";
import type { IngestProblem, ReadCounts } from "../wire/audit";

let bundled: string | undefined;

function workerSource(): string {
  bundled ??= buildSync({ entryPoints: [join(__dirname, "parse-worker.ts")], bundle: true, platform: "node", format: "cjs", target: "node20", write: false, logLevel: "silent" }).outputFiles[0].text;
  return bundled;
}

type WorkerMessage = WorkerBatch | { done: true; counts: ReadCounts; problems: IngestProblem[] };

export async function ingestFileThreaded(ingester: AuditIngester, path: string, onBytes?: (bytesRead: number) => void, label = path): Promise<void> {
  const worker = new Worker(workerSource(), { eval: true, workerData: { path, label } });
  try {
    await new Promise<void>((resolve, reject) => {
      worker.on("message", (message: WorkerMessage) => {
        try {
          if ("done" in message) {
            ingester.reader.absorb(message.counts, message.problems);
            resolve();
            return;
          }
          message.requests.forEach((request, i) => ingester.push(request, message.sizes[i]));
          worker.postMessage("next");
          onBytes?.(message.bytesRead);
        } catch (error) {
          reject(error);
        }
      });
      worker.on("error", reject);
      worker.on("exit", (code) => reject(new Error(`the reading thread stopped (exit ${code}) before the end of ${label}`)));
    });
  } finally {
    await worker.terminate();
  }
  ingester.flush();
}
