/**
 * Checks and re-encodes an uploaded bundle in a thread of its own: unpacking, validating and packing
 * again takes seconds for a bundle the size of the replay (4.5 MB), and an upload may be ten times
 * that; no other request should wait behind it.
 */
import { workerData } from "node:worker_threads";
import { bufferOf, postOutcome } from "../runtime/threads";
import { canonicalBundle } from "./format/codec";
import { heldPart, info } from "./lookup";
import type { SnapshotInfo } from "./format/schema";

/** What the thread answers: the upload's id, its bundle packed again, and what it holds. */
export type CheckedUpload = { id: string; encoded: Uint8Array; held: SnapshotInfo };

const { bytes, maxBytes } = workerData as { bytes: Uint8Array; maxBytes: number };
void postOutcome((): CheckedUpload => {
  const { id, encoded, snapshot } = canonicalBundle(bufferOf(bytes), maxBytes);
  // What the upload holds, not the parsed bundle: see SnapshotStore.put.
  return { id, encoded, held: info(heldPart(snapshot), id) };
});
