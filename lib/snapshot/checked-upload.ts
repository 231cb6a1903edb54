/** An upload's check: what the thread that checks it answers (upload-worker.ts), or a test on its own thread. */
import { checkedBundle } from "./format/codec";
import type { SnapshotInfo } from "./format/schema";
import { heldPart, info, type HeldSnapshot, type OpenedSnapshot } from "./lookup";

/**
 * The upload's id, its bundle as stored, what it holds, and its held part as JSON: one string crosses from the
 * thread far sooner than the objects it parses to (a copy of each), and is parsed in a fraction of that.
 */
export type CheckedUpload = { id: string; encoded: Uint8Array; held: SnapshotInfo; heldJson: string };

export function checkedUpload(bytes: Buffer, maxBytes: number): CheckedUpload {
  const { id, encoded, snapshot } = checkedBundle(bytes, maxBytes);
  // The held part, not the parsed bundle: what opening it would keep (SnapshotStore.put).
  const held = heldPart(snapshot);
  return { id, encoded, held: info(held, id), heldJson: JSON.stringify(held) };
}

/** The held part an upload's check sent, opened as opening the stored bundle would have opened it. */
export const openedFrom = (heldJson: string): OpenedSnapshot => ({ snapshot: JSON.parse(heldJson) as HeldSnapshot, heldBytes: heldJson.length });
