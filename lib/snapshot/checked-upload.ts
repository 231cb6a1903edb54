/** An upload's check: what the thread that checks it answers (upload-worker.ts), or a test on its own thread. */
import { canonicalBundle } from "./format/codec";
import type { SnapshotInfo } from "./format/schema";
import { info, opened, type OpenedSnapshot } from "./lookup";

/** The upload's id, its bundle packed again, what it holds, and its held part, opened. */
export type CheckedUpload = { id: string; encoded: Uint8Array; held: SnapshotInfo; opened: OpenedSnapshot };

export function checkedUpload(bytes: Buffer, maxBytes: number): CheckedUpload {
  const { id, encoded, snapshot } = canonicalBundle(bytes, maxBytes);
  // The held part, not the parsed bundle: what opening it would keep (SnapshotStore.put).
  const held = opened(snapshot);
  return { id, encoded, held: info(held.snapshot, id), opened: held };
}
