/**
 * The ingester's I/O shell for files: expands folders, reads each file as a stream (gunzipped when it
 * starts with gzip's magic bytes, whatever its name), splits it into lines and hands them to the core.
 * Memory stays bounded by one batch and the longest line, whatever the file's size.
 */
import { createReadStream, readdirSync, statSync } from "node:fs";
import { open } from "node:fs/promises";
import { join } from "node:path";
import { createGunzip } from "node:zlib";
import type { AuditIngester } from "./ingest";

/** A line longer than this is not an audit event anyone logged; it is counted as malformed and dropped. */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

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

async function isGzip(path: string): Promise<boolean> {
  const handle = await open(path, "r");
  try {
    const head = Buffer.alloc(2);
    const { bytesRead } = await handle.read(head, 0, 2, 0);
    return bytesRead === 2 && head[0] === 0x1f && head[1] === 0x8b;
  } finally {
    await handle.close();
  }
}

/**
 * Streams one file's lines into the ingester. `onBytes` gets the bytes read so far (compressed
 * bytes for a .gz, so it compares with the file's size). A corrupt .gz ends the file with a problem
 * reported; what was read before it stays.
 */
export async function ingestFile(ingester: AuditIngester, path: string, onBytes?: (bytesRead: number) => void, label = path): Promise<void> {
  const gzip = await isGzip(path);
  const raw = createReadStream(path, { highWaterMark: 1024 * 1024 });
  const stream = gzip ? raw.pipe(createGunzip()) : raw;
  // Counted beside the pipe (added after it, so no chunk flows before the gunzip reads it).
  let bytesRead = 0;
  raw.on("data", (chunk) => {
    bytesRead += chunk.length;
  });
  stream.setEncoding("utf8");
  let carry = "";
  let lineNo = 0;
  let dropping = false;
  try {
    for await (const chunk of stream as AsyncIterable<string>) {
      let text = carry + chunk;
      let start = 0;
      for (let end = text.indexOf("\n", start); end !== -1; end = text.indexOf("\n", start)) {
        lineNo++;
        if (dropping) dropping = false;
        else ingester.line(text.slice(start, end), lineNo, label);
        start = end + 1;
      }
      text = text.slice(start);
      if (text.length > MAX_LINE_BYTES) {
        // Counted once, at its end; its bytes are not kept.
        if (!dropping) {
          ingester.counts.lines++;
          ingester.malformed(label, lineNo + 1, `a line longer than ${MAX_LINE_BYTES / 1048576} MiB`);
        }
        dropping = true;
        text = "";
      }
      carry = text;
      onBytes?.(bytesRead);
    }
  } catch (error) {
    ingester.malformed(label, lineNo + 1, `reading stopped: ${(error as Error).message}`);
    carry = "";
  } finally {
    raw.destroy();
  }
  if (carry !== "" && !dropping) ingester.line(carry, lineNo + 1, label);
  ingester.flush();
  onBytes?.(bytesRead);
}
