/** Tasks and services in real worker threads: answers, failures, bounds (deadline, cancel, heap), progress, TypeScript entries. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import { describe, expect, it } from "vitest";
import { ApiFailure, badRequest } from "@/lib/api/envelope";
import { DEADLINE_CODE, outcomeOf, resultOf, runService, runTask, typeScriptThread } from "@/lib/runtime/threads";

const thread = (code: string) => new Worker(code, { eval: true });
const posting = (message: unknown) => thread(`require("node:worker_threads").parentPort.postMessage(${JSON.stringify(message)})`);
const forever = `setInterval(() => {}, 1000)`;

describe("a task in a thread", () => {
  it("answers what the thread posts as its result", async () => {
    await expect(runTask(posting({ ok: { count: 3 } }), "counting")).resolves.toEqual({ count: 3 });
  });

  it("fails with the thread's error when it throws", async () => {
    await expect(runTask(thread(`throw new Error("no such table: writes")`), "counting")).rejects.toThrow(/no such table: writes/);
  });

  it("fails, naming the work, when the thread ends without an answer", async () => {
    await expect(runTask(thread(`process.exit(3)`), "building the store")).rejects.toThrow("building the store: the thread exited (3) without an answer");
  });

  it("is stopped at its deadline, with a code the caller can answer by", async () => {
    const busy = thread(forever);
    const exited = new Promise((resolve) => busy.once("exit", resolve));
    await expect(runTask(busy, "checking the upload", { deadlineMs: 200 })).rejects.toMatchObject({
      code: DEADLINE_CODE,
      message: "checking the upload: stopped after 0 s",
    });
    await exited;
  });

  it("is stopped when its caller cancels it", async () => {
    const busy = thread(forever);
    const exited = new Promise((resolve) => busy.once("exit", resolve));
    const controller = new AbortController();
    const task = runTask(busy, "reading a log", { signal: controller.signal });
    controller.abort();
    await expect(task).rejects.toMatchObject({ name: "AbortError" });
    await exited;
  });

  it("is stopped at its heap bound, and the caller is told so by the thread's code", async () => {
    const hungry = new Worker(`const keep = []; for (;;) keep.push(new Array(100_000).fill(Math.random()));`, {
      eval: true,
      resourceLimits: { maxOldGenerationSizeMb: 32 },
    });
    await expect(runTask(hungry, "opening the snapshot")).rejects.toMatchObject({ code: "ERR_WORKER_OUT_OF_MEMORY" });
  });

  it("reports progress in order, may be answered, and then answers once", async () => {
    const counter = thread(`
      const { parentPort } = require("node:worker_threads");
      let sent = 0;
      const next = () => (sent < 3 ? parentPort.postMessage({ progress: ++sent }) : parentPort.postMessage({ ok: "done" }));
      parentPort.on("message", next);
      next();`);
    const seen: number[] = [];
    await expect(runTask<string, number>(counter, "counting", { onProgress: (n) => (seen.push(n), counter.postMessage("next")) })).resolves.toBe("done");
    expect(seen).toEqual([1, 2, 3]);
  });

  it("starts a TypeScript entry outside Next", async () => {
    const dir = mkdtempSync(join(tmpdir(), "churnscope-thread-"));
    writeFileSync(
      join(dir, "entry.ts"),
      `import { parentPort } from "node:worker_threads";\nconst answer: number = 41;\nparentPort?.postMessage({ ok: answer + 1 });\n`,
    );
    await expect(runTask(typeScriptThread(join(dir, "entry.ts"), {}), "typed")).resolves.toBe(42);
  });
});

describe("a service in a thread", () => {
  it("logs what it reports, and that it stopped", async () => {
    const lines: string[] = [];
    const service = thread(`
      const { parentPort } = require("node:worker_threads");
      parentPort.postMessage({ error: "database is locked" });
      setTimeout(() => { throw new Error("disk gone"); }, 50);`);
    const exited = new Promise((resolve) => service.once("exit", resolve));
    runService(service, "objects rollups", { log: (line) => lines.push(line) });
    await exited;
    expect(lines).toEqual(["objects rollups: database is locked", "objects rollups: the thread stopped: disk gone"]);
  });
});

describe("work done in a thread, as the caller gets it", () => {
  it("is the result, or an API failure with its status, or an unexpected error naming the work", () => {
    expect(
      resultOf(
        outcomeOf(() => 42),
        "counting",
      ),
    ).toBe(42);
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
    expect(() => resultOf(structuredClone(full), "building the store")).toThrow(
      expect.objectContaining({ code: "SQLITE_FULL", message: "building the store: database or disk is full" }),
    );
    await expect(runTask(posting({ ok: 7 }), "counting")).resolves.toBe(7);
    await expect(runTask(posting({ failure: { httpStatus: 413, errorType: "too_large", message: "too big" } }), "checking")).rejects.toMatchObject({
      httpStatus: 413,
      errorType: "too_large",
    });
  });
});
