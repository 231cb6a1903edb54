/**
 * Checks and re-encodes an uploaded bundle in a thread of its own: unpacking, validating and packing
 * again takes seconds for a bundle the size of the replay (4.5 MB), and an upload may be ten times
 * that; no other request should wait behind it.
 */
import { workerData } from "node:worker_threads";
import { bufferOf, postOutcome } from "../runtime/threads";
import { checkedUpload } from "./checked-upload";

const { bytes, maxBytes } = workerData as { bytes: Uint8Array; maxBytes: number };
void postOutcome(() => checkedUpload(bufferOf(bytes), maxBytes));
