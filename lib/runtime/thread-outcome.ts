import type { Worker } from "node:worker_threads";
import { ApiFailure } from "../api/envelope";

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

/**
 * What a thread posts for work that may fail as the API answers (an ApiFailure) or unexpectedly; an
 * unexpected error keeps its `code` (SQLite's, say, so a full disk still answers 507).
 */
export type WorkOutcome<T> = { ok: T } | { failure: { httpStatus: number; errorType: string; message: string } } | { error: string; code?: unknown };

/** A Buffer over the bytes a thread was sent (they arrive as a plain Uint8Array), without copying them. */
export const bufferOf = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

/** In the thread: the work's result, or its failure in a form that crosses to the caller. */
export function outcomeOf<T>(work: () => T): WorkOutcome<T> {
  try {
    return { ok: work() };
  } catch (error) {
    return ApiFailure.is(error)
      ? { failure: { httpStatus: error.httpStatus, errorType: error.errorType, message: error.message } }
      : { error: error instanceof Error ? error.message : String(error), code: (error as { code?: unknown } | null)?.code };
  }
}

/** The result of work a thread posts as a WorkOutcome, or its failure thrown again (see resultOf). */
export async function threadResult<T>(thread: Worker, what: string): Promise<T> {
  return resultOf(await threadOutcome<WorkOutcome<T>>(thread, what), what);
}

/** In the caller: the result, or the thread's failure thrown again (an ApiFailure keeps its status). */
export function resultOf<T>(outcome: WorkOutcome<T>, what: string): T {
  if ("ok" in outcome) return outcome.ok;
  if ("failure" in outcome) throw new ApiFailure(outcome.failure.httpStatus, outcome.failure.errorType, outcome.failure.message);
  throw Object.assign(new Error(`${what}: ${outcome.error}`), { code: outcome.code });
}
