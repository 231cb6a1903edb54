/**
 * The Objects rollups in a thread of their own: the dashboard starts this with the store's path, and
 * it keeps the store rolled up on its own connection, so no request waits behind a step.
 */
import { parentPort, workerData } from "node:worker_threads";
import type { ThreadMessage } from "../runtime/threads";
import type { StoreTarget } from "./database";
import { WriteStore } from "./store";

const { target } = workerData as { target: StoreTarget };
void WriteStore.open(target).then(
  (store) => store.keepRolledUp((error) => parentPort?.postMessage({ error: error.message } satisfies ThreadMessage<never>), { keepAlive: true }),
  (error: Error) => parentPort?.postMessage({ error: error.message } satisfies ThreadMessage<never>),
);
