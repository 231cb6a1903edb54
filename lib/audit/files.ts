/**
 * The ingester's I/O shell for files: expands folders and streams each file through the reader into
 * the ingester, in this thread (uploads) or with the reading in a thread of its own (`npm run
 * ingest`). Memory stays bounded by one batch and the longest line, whatever the file's size.
 */
import { createHash } from "node:crypto";
import { createReadStream, readdirSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { createGunzip } from "node:zlib";
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

/** How much of a log's start is read for its identity. */
const IDENTITY_BYTES = 256 * 1024;

/**
 * What a log is, whatever it is named or how far it has grown: the digest of its first line that names an auditID
 * (unique to a request and its stage), or of its first 256 KiB where none does. The same log read again (copied,
 * renamed, grown since) has the same identity, so its calls are not counted twice (lib/store/api-calls.ts).
 */
export async function logIdentity(path: string): Promise<string> {
  const head = await readHead(path);
  const line = head
    .toString("latin1")
    .split("\n")
    .find((l) => l.includes('"auditID"'));
  return `log:${createHash("sha256")
    .update(line ?? head)
    .digest("hex")}`;
}

/** A log's first IDENTITY_BYTES, inflated if it is gzipped; as much as there is of a short or damaged one. */
async function readHead(path: string): Promise<Buffer> {
  const file = await open(path);
  try {
    const { buffer, bytesRead } = await file.read(Buffer.alloc(IDENTITY_BYTES), 0, IDENTITY_BYTES, 0);
    const raw = buffer.subarray(0, bytesRead);
    if (raw.length < 2 || raw[0] !== 0x1f || raw[1] !== 0x8b) return raw;
  } finally {
    await file.close();
  }
  const chunks: Buffer[] = [];
  let length = 0;
  const inflated = createReadStream(path).pipe(createGunzip());
  try {
    for await (const chunk of inflated as AsyncIterable<Buffer>) {
      chunks.push(chunk);
      length += chunk.length;
      if (length >= IDENTITY_BYTES) break;
    }
  } catch {
    // stops decoding early: what was inflated is its head
  } finally {
    inflated.destroy();
  }
  return Buffer.concat(chunks).subarray(0, IDENTITY_BYTES);
}

/** Streams one file into the ingester in this thread. */
export async function ingestFile(ingester: AuditIngester, path: string, onBytes?: (bytesRead: number) => void, label = path): Promise<void> {
  await ingester.beginSource(await logIdentity(path));
  await readFileLines(ingester.reader, path, label, onBytes);
  await ingester.flush();
}

/**
 * Streams one file into the ingester with the reading in a second thread: it splits, skips and parses
 * lines while this thread classifies and stores, so a large log goes in at nearly the rate the store
 * takes it. For the command line, which runs under tsx.
 */
export async function ingestFileThreaded(ingester: AuditIngester, path: string, onBytes?: (bytesRead: number) => void, label = path): Promise<void> {
  const { callsFromLine, flowSchemas } = await ingester.beginSource(await logIdentity(path));
  const reading = typeScriptThread(join(__dirname, "parse-worker.ts"), { workerData: { path, label, callsFromLine, flowSchemas } });
  const totals = await runTask<ReadTotals, ReadBatch>(reading, `reading ${label}`, {
    onProgress: (batch) => {
      ingester.absorbCalls(batch.calls);
      batch.requests.forEach((request, i) => ingester.push(request, batch.sizes[i]));
      // The next batch is asked for once what was read is stored, or being stored.
      void ingester.settled().then(() => reading.postMessage("next"));
      onBytes?.(batch.bytesRead);
    },
  });
  ingester.reader.absorb(totals.counts, totals.problems);
  await ingester.flush();
}
