/**
 * Opens a stored bundle in a thread of its own (SnapshotStore.open): unpacking, parsing and validating the
 * replay takes about 1.1 s, during which no other request would be answered. It posts back the part the
 * server keeps (HeldSnapshot: without the object writes), whose copy costs the caller's thread about an
 * eighth of that.
 */
import { workerData } from "node:worker_threads";
import { bufferOf, postOutcome } from "../runtime/threads";
import { decodeSnapshot } from "./format/codec";
import { opened } from "./lookup";

const { bytes, maxBytes } = workerData as { bytes: Uint8Array; maxBytes: number };
void postOutcome(() => opened(decodeSnapshot(bufferOf(bytes), maxBytes)));
