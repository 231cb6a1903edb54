/**
 * Checks and re-encodes an uploaded bundle in a thread of its own: unpacking, validating and packing
 * again at gzip level 9 takes about 3 s for a bundle the size of the replay (2.7 MB), and an upload
 * may be ten times that; no other request should wait behind it.
 */
import { parentPort, workerData } from "node:worker_threads";
import { ApiFailure } from "../api/envelope";
import { canonicalBundle } from "./codec";
import { info } from "./lookup";
import type { SnapshotInfo } from "./schema";

export type UploadOutcome =
  | { ok: { id: string; encoded: Uint8Array; held: SnapshotInfo } }
  | { failure: { httpStatus: number; errorType: string; message: string } }
  | { error: string };

const { bytes, maxBytes } = workerData as { bytes: Uint8Array; maxBytes: number };
let outcome: UploadOutcome;
try {
  const { id, encoded, snapshot } = canonicalBundle(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), maxBytes);
  // What the upload holds, not the parsed bundle: see SnapshotStore.put.
  outcome = { ok: { id, encoded, held: info(snapshot, id) } };
} catch (error) {
  outcome = ApiFailure.is(error)
    ? { failure: { httpStatus: error.httpStatus, errorType: error.errorType, message: error.message } }
    : { error: error instanceof Error ? error.message : String(error) };
}
parentPort?.postMessage(outcome);
