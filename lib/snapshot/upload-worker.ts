/**
 * Checks and re-encodes an uploaded bundle in a thread of its own: unpacking, validating and packing
 * again at gzip level 9 takes about 3 s for a bundle the size of the replay (2.7 MB), and an upload
 * may be ten times that; no other request should wait behind it.
 */
import { parentPort, workerData } from "node:worker_threads";
import { ApiFailure } from "../api/envelope";
import { canonicalBundle } from "./codec";

export type UploadOutcome =
  | { ok: ReturnType<typeof canonicalBundle> }
  | { failure: { httpStatus: number; errorType: string; message: string } }
  | { error: string };

const { bytes, maxBytes } = workerData as { bytes: Uint8Array; maxBytes: number };
let outcome: UploadOutcome;
try {
  outcome = { ok: canonicalBundle(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), maxBytes) };
} catch (error) {
  outcome = ApiFailure.is(error)
    ? { failure: { httpStatus: error.httpStatus, errorType: error.errorType, message: error.message } }
    : { error: error instanceof Error ? error.message : String(error) };
}
parentPort?.postMessage(outcome);
