import type { Worker } from "node:worker_threads";

/**
 * The one message a worker thread posts with its outcome; rejected when the thread fails or ends
 * without posting one. The Worker is made by the caller: Turbopack bundles a thread's entry only
 * from `new Worker(new URL("./entry.ts", import.meta.url))` written out where it is started.
 */
export function threadOutcome<T>(thread: Worker, what: string): Promise<T> {
  return new Promise((resolve, reject) => {
    thread.once("message", resolve);
    thread.once("error", reject);
    thread.once("exit", (code) => reject(new Error(`${what}: the thread exited (${code}) without an answer`)));
  });
}
