/**
 * Packs an open snapshot again for "Download snapshot" when something was added to it here: the notes people
 * added to it, and the view it is downloaded from. In a thread of its own, as opening one is (open-worker.ts).
 */
import { workerData } from "node:worker_threads";
import { bufferOf, postOutcome } from "../runtime/threads";
import { encodeSnapshot, readStoredBundle } from "./format/codec";
import type { Snapshot, SnapshotMarker } from "./format/schema";

const { bytes, maxBytes, markers, initialView } = workerData as {
  bytes: Uint8Array;
  maxBytes: number;
  markers: SnapshotMarker[];
  initialView?: Snapshot["initialView"];
};
void postOutcome(() => {
  const snapshot = readStoredBundle(bufferOf(bytes), maxBytes);
  const encoded = encodeSnapshot({
    ...snapshot,
    markers: [...snapshot.markers, ...markers].sort((a, b) => a.timeMs - b.timeMs),
    ...(initialView ? { initialView } : {}),
  });
  return new Uint8Array(encoded.buffer, encoded.byteOffset, encoded.byteLength);
});
