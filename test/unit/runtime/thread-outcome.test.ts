import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { ApiFailure, badRequest } from "@/lib/api/envelope";
import { outcomeOf, resultOf, threadOutcome, threadResult } from "@/lib/runtime/thread-outcome";

const thread = (code: string) => new Worker(code, { eval: true });

describe("a worker thread's outcome", () => {
  it("is the message it posts", async () => {
    await expect(threadOutcome(thread(`require("node:worker_threads").parentPort.postMessage({ count: 3 })`), "counting")).resolves.toEqual({ count: 3 });
  });

  it("fails with the thread's error when it throws", async () => {
    await expect(threadOutcome(thread(`throw new Error("no such table: writes")`), "counting")).rejects.toThrow(/no such table: writes/);
  });

  it("fails, naming the work, when the thread ends without a message", async () => {
    await expect(threadOutcome(thread(`process.exit(3)`), "building the store")).rejects.toThrow("building the store: the thread exited (3) without an answer");
  });
});

describe("work done in a thread, as the caller gets it", () => {
  it("is the result, or an API failure with its status, or an unexpected error naming the work", () => {
    expect(resultOf(outcomeOf(() => 42), "counting")).toBe(42);
    const failure = outcomeOf(() => {
      throw badRequest("the snapshot is not JSON");
    });
    // What crosses between threads is plain data: a structured clone keeps it whole.
    const thrown = (() => {
      try {
        resultOf(structuredClone(failure), "opening the snapshot");
      } catch (error) {
        return error;
      }
    })();
    expect(ApiFailure.is(thrown)).toBe(true);
    expect(thrown).toMatchObject({ httpStatus: 400, errorType: "bad_data", message: "the snapshot is not JSON" });
    const unexpected = outcomeOf(() => {
      throw new TypeError("cannot read properties of undefined");
    });
    expect(() => resultOf(structuredClone(unexpected), "opening the snapshot")).toThrow("opening the snapshot: cannot read properties of undefined");
  });

  it("keeps an unexpected error's code, so a full disk in a thread still answers as one", async () => {
    const full = outcomeOf(() => {
      throw Object.assign(new Error("database or disk is full"), { code: "SQLITE_FULL" });
    });
    expect(() => resultOf(structuredClone(full), "building the store")).toThrow(expect.objectContaining({ code: "SQLITE_FULL", message: "building the store: database or disk is full" }));
    const posting = (message: unknown) => thread(`require("node:worker_threads").parentPort.postMessage(${JSON.stringify(message)})`);
    await expect(threadResult(posting({ ok: 7 }), "counting")).resolves.toBe(7);
    await expect(threadResult(posting({ failure: { httpStatus: 413, errorType: "too_large", message: "too big" } }), "checking")).rejects.toMatchObject({ httpStatus: 413, errorType: "too_large" });
  });
});
