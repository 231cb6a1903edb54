/**
 * Reading and writing snapshot bundles. Reading checks, in order: size, gzip, JSON, format,
 * version, schema, and internal consistency, and says which check failed.
 */
import { createHash } from "node:crypto";
import { gunzipSync, gzipSync } from "node:zlib";
import { ApiFailure, badRequest } from "../../api/envelope";
import { formatBytes } from "../../format/number";
import { stringEnd } from "./top-level";
import { SNAPSHOT_FORMAT, SNAPSHOT_VERSION, snapshotSchema, type Snapshot } from "./schema";

export const tooLarge = (message: string) => new ApiFailure(413, "too_large", message);

/**
 * Level 6, zlib's default: the replay's 62 MB pack in 0.8 s to 4.5 MB, where level 9 took 3.7 s for 4.4 MB, and every
 * download and upload waits for it.
 */
export function encodeSnapshot(snapshot: Snapshot): Buffer {
  return packJson(JSON.stringify(snapshot));
}

/** A bundle's JSON text packed: at zlib's default level, or at `level` where the wait matters more than the size. */
export const packJson = (json: string, level = 6): Buffer => gzipSync(Buffer.from(json), { level });

/**
 * An upload as it is stored: checked in full, kept as it came (packed, if it came as plain JSON) and named by a hash
 * of the bytes stored, so the same file uploaded twice is one snapshot (hashing the packed bytes rather than the JSON
 * they unpack to takes a tenth of the time). The schema refuses what it does not know rather than leaving it out, and
 * has no defaults or transforms: what it accepts is what is stored, and no second writing of tens of megabytes of JSON
 * is needed to name or store it.
 */
export function checkedBundle(bytes: Buffer, maxBytes: number): { id: string; encoded: Buffer; snapshot: Snapshot } {
  const text = unpack(bytes, maxBytes);
  const snapshot = checkedSnapshot(text);
  const encoded = isGzip(bytes) ? bytes : packJson(text);
  return { id: createHash("sha256").update(encoded).digest("hex").slice(0, 16), encoded, snapshot };
}

const isGzip = (bytes: Buffer) => bytes[0] === 0x1f && bytes[1] === 0x8b;

/**
 * What a bundle may hold before it is parsed: JSON.parse of tens of millions of empty arrays takes
 * gigabytes and minutes and cannot be stopped, however few bytes they pack to. The replay holds one
 * array or object per 70 bytes (666,621 in 46 MB): a bundle may hold 6 times as many as the replay in
 * all, and 4 times as dense.
 */
export const MAX_CONTAINERS = 4_000_000;
const MIN_BYTES_PER_CONTAINER = 16;

/** Counts the arrays and objects outside strings in one pass, and refuses a bundle that holds too many. */
export function checkShape(text: string): void {
  let containers = 0;
  const allowed = Math.min(MAX_CONTAINERS, Math.max(10_000, Math.floor(text.length / MIN_BYTES_PER_CONTAINER)));
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) i = stringEnd(text, i) - 1;
    else if ((c === 0x7b || c === 0x5b) && ++containers > allowed) {
      throw tooLarge(
        `the snapshot holds more than ${allowed.toLocaleString("en-US")} arrays and objects in ${formatBytes(text.length)}: more, or smaller, pieces than a snapshot of its size holds`,
      );
    }
  }
}

/** A bundle's JSON text, from gzip or plain JSON: at most `maxBytes` packed and 8 times that unpacked. */
function unpack(bytes: Buffer, maxBytes: number): string {
  if (bytes.length > maxBytes) throw tooLarge(`the snapshot is ${formatBytes(bytes.length)}; at most ${formatBytes(maxBytes)} is accepted`);
  if (!isGzip(bytes)) return bytes.toString("utf8");
  try {
    return gunzipSync(bytes, { maxOutputLength: maxBytes * 8 }).toString("utf8");
  } catch (error) {
    const code = (error as { code?: string }).code;
    if (code === "ERR_BUFFER_TOO_LARGE") throw tooLarge(`the snapshot unpacks to more than ${formatBytes(maxBytes * 8)}`);
    throw badRequest("the snapshot is not a valid gzip file (truncated or corrupt)");
  }
}

/**
 * A bundle this server keeps (an upload, checked by decodeSnapshot on its way in, or the shipped replay), read back
 * without checking it again: its checks took 1.4 s of the 2.5 s it took to read the replay's bundle.
 */
export function readStoredBundle(bytes: Buffer, maxBytes: number): Snapshot {
  return JSON.parse(storedText(bytes, maxBytes)) as Snapshot;
}

/** A bundle this server keeps as its JSON text, unparsed (see readStoredBundle). */
export const storedText = (bytes: Buffer, maxBytes: number): string => unpack(bytes, maxBytes);

/**
 * A bundle checked in full: an upload, and a stored bundle as it is opened (a newer replica's may be of a newer format).
 * Accepts gzip or plain JSON. `maxBytes` bounds both the upload and what it unpacks to (×8).
 */
export function decodeSnapshot(bytes: Buffer, maxBytes: number): Snapshot {
  return checkedSnapshot(unpack(bytes, maxBytes));
}

/** A bundle's JSON text checked in full (decodeSnapshot). */
function checkedSnapshot(text: string): Snapshot {
  checkShape(text);
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
  if (badWrite >= 0)
    throw badRequest(
      `the snapshot is inconsistent: objectWrites.writes.${badWrite} names object ${snapshot.objectWrites?.writes[badWrite].o}, but there are ${objects}`,
    );
  const audit = snapshot.auditRequests;
  const badAuditRequest = audit?.requests.findIndex((r) => r.c >= audit.clients.length || r.x >= audit.targets.length) ?? -1;
  if (audit && badAuditRequest >= 0)
    throw badRequest(`the snapshot is inconsistent: auditRequests.requests.${badAuditRequest} names a client or target it does not list`);
  const calls = snapshot.apiCalls;
  if (calls) {
    // Name columns: cluster, client, version, verb, target, flow; of a watch's end: cluster, client, version, target.
    const names = calls.names.length;
    const badRow = calls.rows.findIndex((r) => [1, 2, 3, 4, 5, 7].some((i) => r[i] >= names) || r[6] >= 1 << 10);
    if (badRow >= 0) throw badRequest(`the snapshot is inconsistent: apiCalls.rows.${badRow} names a name it does not list`);
    const badEnd = calls.watchEnds.findIndex((r) => [1, 2, 3, 4].some((i) => r[i] >= names));
    if (badEnd >= 0) throw badRequest(`the snapshot is inconsistent: apiCalls.watchEnds.${badEnd} names a name it does not list`);
  }
  const badRange = snapshot.ranges.findIndex((r) => r.endMs <= r.startMs);
  if (badRange >= 0) throw badRequest(`the snapshot is inconsistent: ranges.${badRange} ends before it starts`);
  return snapshot;
}

/** How a bundle is read as it opens: the shipped replay as it is stored, any other checked in full (see SnapshotOpener). */
export const openingReader = (shipped: boolean) => (shipped ? readStoredBundle : decodeSnapshot);
