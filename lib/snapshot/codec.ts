/**
 * Reading and writing snapshot bundles. Reading checks, in order: size, gzip, JSON, format,
 * version, schema, and internal consistency, and says which check failed.
 */
import { createHash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import { ApiFailure, badRequest } from "../api/envelope";
import { formatBytes } from "../format/number";
import { SNAPSHOT_FORMAT, SNAPSHOT_VERSION, snapshotSchema, type Snapshot } from "./schema";

export const tooLarge = (message: string) => new ApiFailure(413, "too_large", message);

export function encodeSnapshot(snapshot: Snapshot): Buffer {
  return gzipSync(Buffer.from(JSON.stringify(snapshot)), { level: 9 });
}

/** An upload as it is stored: checked, packed again (what the schema does not know left out), and named by a hash of that. */
export function canonicalBundle(bytes: Buffer, maxBytes: number): { id: string; encoded: Buffer; snapshot: Snapshot } {
  const snapshot = decodeSnapshot(bytes, maxBytes);
  const encoded = encodeSnapshot(snapshot);
  return { id: createHash("sha256").update(encoded).digest("hex").slice(0, 16), encoded, snapshot };
}

/** Accepts gzip or plain JSON. `maxBytes` bounds both the upload and what it unpacks to (×8). */
export function decodeSnapshot(bytes: Buffer, maxBytes: number): Snapshot {
  if (bytes.length > maxBytes) throw tooLarge(`the snapshot is ${formatBytes(bytes.length)}; at most ${formatBytes(maxBytes)} is accepted`);
  let text: string;
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) {
    try {
      text = gunzipSync(bytes, { maxOutputLength: maxBytes * 8 }).toString("utf8");
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === "ERR_BUFFER_TOO_LARGE") throw tooLarge(`the snapshot unpacks to more than ${formatBytes(maxBytes * 8)}`);
      throw badRequest("the snapshot is not a valid gzip file (truncated or corrupt)");
    }
  } else {
    text = bytes.toString("utf8");
  }
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    throw badRequest("the snapshot is not JSON (expected a .json.gz file exported by Churnscope)");
  }
  const head = raw as { format?: unknown; version?: unknown } | null;
  if (typeof head !== "object" || head === null || head.format !== SNAPSHOT_FORMAT) {
    throw badRequest(`the file is not a Churnscope snapshot (its "format" is not "${SNAPSHOT_FORMAT}")`);
  }
  if (typeof head.version !== "number") throw badRequest("the snapshot has no version number");
  if (head.version > SNAPSHOT_VERSION) {
    throw badRequest(`the snapshot is format version ${head.version}, made by a newer Churnscope; this one reads version ${SNAPSHOT_VERSION}`);
  }
  const parsed = snapshotSchema.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw badRequest(`the snapshot does not match format version ${SNAPSHOT_VERSION}: ${issue.path.join(".") || "(top level)"}: ${issue.message}`);
  }
  const snapshot = parsed.data;
  const objects = snapshot.objectWrites?.objects.length ?? 0;
  const badWrite = snapshot.objectWrites?.writes.findIndex((w) => w.o >= objects) ?? -1;
  if (badWrite >= 0) throw badRequest(`the snapshot is inconsistent: objectWrites.writes.${badWrite} names object ${snapshot.objectWrites?.writes[badWrite].o}, but there are ${objects}`);
  const badRange = snapshot.ranges.findIndex((r) => r.endMs <= r.startMs);
  if (badRange >= 0) throw badRequest(`the snapshot is inconsistent: ranges.${badRange} ends before it starts`);
  return snapshot;
}
