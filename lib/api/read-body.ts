/**
 * Reads a request body up to a size limit without ever buffering more. Past the limit the rest is
 * read and dropped (up to 8× the limit), so the client gets the 413 instead of a reset connection.
 */
import { formatBytes } from "../format/number";
import { tooLarge } from "../snapshot/format/codec";
import { badRequest } from "./envelope";

/** Hands each chunk to `take` while the body stays within `maxBytes`; past it, drains and throws 413 naming `limitName`. Returns the bytes taken. */
export async function readLimited(
  body: ReadableStream<Uint8Array>,
  maxBytes: number,
  limitName: string,
  take: (chunk: Uint8Array) => void | Promise<void>,
): Promise<number> {
  let total = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return total;
    total += value.length;
    if (total > maxBytes) break;
    await take(value);
  }
  while (total <= maxBytes * 8) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
  }
  await reader.cancel();
  throw tooLarge(`the upload is larger than ${formatBytes(maxBytes)} (${limitName})`);
}

export async function readBodyLimited(body: ReadableStream<Uint8Array> | null, maxBytes: number, limitName = "limits.maxSnapshotMiB"): Promise<Buffer> {
  if (!body) throw badRequest("the request has no body: send the snapshot file as the request body");
  const chunks: Uint8Array[] = [];
  const total = await readLimited(body, maxBytes, limitName, (chunk) => void chunks.push(chunk));
  if (total === 0) throw badRequest("the upload is empty");
  return Buffer.concat(chunks);
}
