/**
 * Packs an open snapshot again for "Download snapshot" when something was added to it here: the notes people
 * added to it, and the view it is downloaded from. Only those two values are written into the stored bundle's
 * text (it was checked on its way in), then it is packed; in a thread of its own, as opening one is (open-worker.ts).
 */
import { workerData } from "node:worker_threads";
import { bufferOf, postOutcome } from "../runtime/threads";
import { packJson, storedText } from "./format/codec";
import type { Snapshot, SnapshotMarker } from "./format/schema";
import { withTopLevelValues } from "./format/top-level";

const { bytes, maxBytes, markers, initialView } = workerData as {
  bytes: Uint8Array;
  maxBytes: number;
  markers: SnapshotMarker[];
  initialView?: Snapshot["initialView"];
};
void postOutcome(() => {
  const json = withTopLevelValues(storedText(bufferOf(bytes), maxBytes), {
    markers: (old) => JSON.stringify([...(old === undefined ? [] : (JSON.parse(old) as SnapshotMarker[])), ...markers].sort((a, b) => a.timeMs - b.timeMs)),
    ...(initialView ? { initialView: () => JSON.stringify(initialView) } : {}),
  });
  // At the fastest level: the download waits for it (the replay's 46 MB: 0.2 s and 6.3 MB, against 0.6 s and 4.5 MB).
  const encoded = packJson(json, 1);
  return new Uint8Array(encoded.buffer, encoded.byteOffset, encoded.byteLength);
});
