/**
 * The one way work runs in a thread of its own. A task (checking or opening a snapshot, building a
 * snapshot's object store, reading an audit log) answers once, may report progress first, and is
 * bounded: its heap by the Worker's resourceLimits, its time by a deadline, and a caller may cancel
 * it. A service (the Objects roll-ups) runs for the life of the process and reports only errors.
 * Every thread posts the same message type.
 *
 * The Worker is made by the caller: Turbopack bundles a thread's entry only from
 * `new Worker(new URL("./entry.ts", import.meta.url))` written out where it is started. Outside
 * Next (the command-line tools, under tsx) `typeScriptThread` starts the same entries.
 */
import { parentPort, Worker, type WorkerOptions } from "node:worker_threads";
import { ApiFailure } from "../api/envelope";

/**
 * What a thread posts: progress (a task may post any number), then its result, its failure as the API
 * answers it (an ApiFailure), or an unexpected error with its `code` (SQLite's, say, so a full disk
 * still answers 507). A service posts only errors.
 */
export type ThreadMessage<T, P = never> =
  { ok: T } | { failure: { httpStatus: number; errorType: string; message: string } } | { error: string; code?: unknown } | { progress: P };

/** The code of a task stopped at its deadline (a thread stopped at its heap bound has ERR_WORKER_OUT_OF_MEMORY). */
export const DEADLINE_CODE = "ERR_THREAD_DEADLINE";

/** A Buffer over the bytes a thread was sent (they arrive as a plain Uint8Array), without copying them. */
export const bufferOf = (bytes: Uint8Array) => Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);

function failureOf(error: unknown): ThreadMessage<never> {
  return ApiFailure.is(error)
    ? { failure: { httpStatus: error.httpStatus, errorType: error.errorType, message: error.message } }
    : { error: error instanceof Error ? error.message : String(error), code: (error as { code?: unknown } | null)?.code };
}

/** In the thread: the work's result, or its failure, in a form that crosses to the caller. */
export function outcomeOf<T>(work: () => T): ThreadMessage<T> {
  try {
    return { ok: work() };
  } catch (error) {
    return failureOf(error);
  }
}

/** In the thread: runs the work (which may report progress) and posts its outcome. */
export async function postOutcome<T, P = never>(work: (progress: (value: P) => void) => T | Promise<T>): Promise<void> {
  const post = (message: ThreadMessage<T, P>) => parentPort?.postMessage(message);
  try {
    post({ ok: await work((value) => post({ progress: value })) });
  } catch (error) {
    post(failureOf(error));
  }
}

/** In the caller: the result, or the thread's failure thrown again (an ApiFailure keeps its status). */
export function resultOf<T>(outcome: ThreadMessage<T, unknown>, what: string): T {
  if ("ok" in outcome) return outcome.ok;
  if ("failure" in outcome) throw new ApiFailure(outcome.failure.httpStatus, outcome.failure.errorType, outcome.failure.message);
  if ("error" in outcome) throw Object.assign(new Error(`${what}: ${outcome.error}`), { code: outcome.code });
  throw new Error(`${what}: progress where an answer was expected`);
}

export interface TaskBounds<P> {
  /** past it the thread is stopped and the task fails with DEADLINE_CODE */
  deadlineMs?: number;
  signal?: AbortSignal;
  /** each progress report, in order; it may answer the thread (`thread.postMessage`) */
  onProgress?: (value: P) => void;
}

/** A task's result; the thread is stopped once it has answered, failed, run out of time or been cancelled. */
export function runTask<T, P = never>(thread: Worker, what: string, bounds: TaskBounds<P> = {}): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const answer = new Promise<T>((resolve, reject) => {
    const stop = (error: Error) => {
      reject(error);
      void thread.terminate();
    };
    thread.on("message", (message: ThreadMessage<T, P>) => {
      try {
        if ("progress" in message) bounds.onProgress?.(message.progress);
        else resolve(resultOf(message, what));
      } catch (error) {
        stop(error as Error);
      }
    });
    thread.once("error", reject);
    thread.once("exit", (code) => reject(new Error(`${what}: the thread exited (${code}) without an answer`)));
    if (bounds.deadlineMs !== undefined) {
      const seconds = Math.round(bounds.deadlineMs / 1000);
      timer = setTimeout(() => stop(Object.assign(new Error(`${what}: stopped after ${seconds} s`), { code: DEADLINE_CODE })), bounds.deadlineMs);
    }
    if (bounds.signal) {
      onAbort = () => stop(Object.assign(new Error(`${what}: cancelled`), { name: "AbortError" }));
      if (bounds.signal.aborted) onAbort();
      else bounds.signal.addEventListener("abort", onAbort, { once: true });
    }
  });
  return answer.finally(() => {
    clearTimeout(timer);
    if (onAbort) bounds.signal?.removeEventListener("abort", onAbort);
    void thread.terminate();
  });
}

/**
 * A service for the life of the process: its errors, and its end, are logged; what it reports as it goes goes to
 * `onProgress`; it never holds the process open.
 */
export function runService<P = never>(
  thread: Worker,
  what: string,
  { log = console.error, onProgress }: { log?: (line: string) => void; onProgress?: (value: P) => void } = {},
): void {
  thread.on("message", (message: ThreadMessage<never, P>) => {
    if ("error" in message) log(`${what}: ${message.error}`);
    else if ("progress" in message) onProgress?.(message.progress);
  });
  thread.on("error", (error) => log(`${what}: the thread stopped: ${error.message}`));
  thread.unref();
}

/** A thread entry in TypeScript, for processes that run under tsx: the thread loads tsx's loader before it. */
export function typeScriptThread(entryPath: string, options: WorkerOptions): Worker {
  return new Worker(`require("tsx/cjs"); require(${JSON.stringify(entryPath)});`, { ...options, eval: true });
}
