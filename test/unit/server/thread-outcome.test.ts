import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { threadOutcome } from "@/lib/server/thread-outcome";

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
