/**
 * Opens a stored bundle in a thread of its own (SnapshotStore.open): unpacking and parsing the replay takes
 * about a second (2.5 s with an upload's checks, which a bundle other than the replay passes again), during
 * which no other request would be answered. It posts back the part the server keeps (HeldSnapshot: without
 * the object writes), whose copy costs the caller's thread a fraction of that.
 */
import { workerData } from "node:worker_threads";
import { bufferOf, postOutcome } from "../runtime/threads";
import { openingReader } from "./format/codec";
import { opened } from "./lookup";

const { bytes, maxBytes, shipped } = workerData as { bytes: Uint8Array; maxBytes: number; shipped: boolean };
void postOutcome(() => opened(openingReader(shipped)(bufferOf(bytes), maxBytes)));
