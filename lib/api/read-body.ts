/**
 * Reads a request body up to a size limit without ever buffering more. Past the limit the rest is
 * read and dropped (up to 8× the limit), so the client gets the 413 instead of a reset connection.
 */
import { tooLarge } from "../snapshot/codec";
import { badRequest } from "./envelope";

export async function readBodyLimited(body: ReadableStream<Uint8Array> | null, maxBytes: number, limitName = "limits.maxSnapshotMiB"): Promise<Buffer> {
  if (!body) throw badRequest("the request has no body: send the snapshot file as the request body");
  const chunks: Uint8Array[] = [];
  let total = 0;
  const reader = body.getReader();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.length;
    if (total > maxBytes * 8) {
      await reader.cancel();
      break;
    }
    if (total <= maxBytes) chunks.push(value);
  }
  if (total > maxBytes) {
    chunks.length = 0;
    const size = maxBytes >= 1_048_576 ? `${(maxBytes / 1_048_576).toFixed(1)} MiB` : `${Math.round(maxBytes / 1024)} KiB`;
    throw tooLarge(`the upload is larger than ${size} (${limitName})`);
  }
  if (total === 0) throw badRequest("the upload is empty");
  return Buffer.concat(chunks);
}
