/**
 * The ingester's I/O shell for files: expands folders and streams each file through the reader into
 * the ingester, in this thread (uploads) or with the reading in a thread of its own (`npm run
 * ingest`). Memory stays bounded by one batch and the longest line, whatever the file's size.
 */
import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { runTask, typeScriptThread } from "../runtime/threads";
import type { AuditIngester } from "./ingest";
import type { ReadBatch, ReadTotals } from "./parse-worker";
import { readFileLines } from "./reader";

export class InputError extends Error {}

/** Files under the given paths, folders expanded (recursively, by name, so rotated logs come in order). */
export function auditFiles(paths: string[]): string[] {
  const out: string[] = [];
  const visit = (path: string, named: boolean) => {
    let stat;
    try {
      stat = statSync(path);
    } catch {
      throw new InputError(`${path}: no such file or folder`);
    }
    if (stat.isDirectory()) {
      for (const entry of readdirSync(path).sort()) if (!entry.startsWith(".")) visit(join(path, entry), false);
    } else if (stat.isFile() && (named || /\.(log|json|jsonl|gz)(\.\d+)?$|\.log[.-]/.test(entry(path)))) {
      out.push(path);
    }
  };
  const entry = (path: string) => path.slice(path.lastIndexOf("/") + 1);
  for (const path of paths) visit(path, true);
  return out;
}

/** Streams one file into the ingester in this thread. */
export async function ingestFile(ingester: AuditIngester, path: string, onBytes?: (bytesRead: number) => void, label = path): Promise<void> {
  await readFileLines(ingester.reader, path, label, onBytes);
  await ingester.flush();
}

/**
 * Streams one file into the ingester with the reading in a second thread: it splits, skips and parses
 * lines while this thread classifies and stores, so a large log goes in at nearly the rate the store
 * takes it. For the command line, which runs under tsx.
 */
export async function ingestFileThreaded(ingester: AuditIngester, path: string, onBytes?: (bytesRead: number) => void, label = path): Promise<void> {
  const reading = typeScriptThread(join(__dirname, "parse-worker.ts"), { workerData: { path, label } });
  const totals = await runTask<ReadTotals, ReadBatch>(reading, `reading ${label}`, {
    onProgress: (batch) => {
      batch.requests.forEach((request, i) => ingester.push(request, batch.sizes[i]));
      // The next batch is asked for once what was read is stored, or being stored.
      void ingester.settled().then(() => reading.postMessage("next"));
      onBytes?.(batch.bytesRead);
    },
  });
  ingester.reader.absorb(totals.counts, totals.problems);
  await ingester.flush();
}
