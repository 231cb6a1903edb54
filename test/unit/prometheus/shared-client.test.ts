/** Query sharing in front of Prometheus: coalescing, brief reuse, no reuse of failures, bounded concurrency. */
import { describe, expect, it } from "vitest";
import type { PromClient } from "@/lib/promql/types";
import { sharedClient } from "@/lib/prometheus/shared-client";
import type { PromQueryData, PromResult } from "@/lib/promql/types";

/** An inner client whose answers the test releases by hand, counting what reaches it. */
function gatedClient() {
  const calls: { expr: string; release: (ok: boolean) => void }[] = [];
  const answer = (expr: string) =>
    new Promise<PromResult<PromQueryData>>((resolve, reject) =>
      calls.push({
        expr,
        release: (ok) => (ok ? resolve({ data: { resultType: "vector", result: [] }, warnings: [expr], infos: [] }) : reject(new Error(`failed ${expr}`))),
      }),
    );
  const inner = { query: (expr: string) => answer(expr), queryRange: (expr: string) => answer(expr) } as unknown as PromClient;
  return { inner, calls };
}
const tick = () => new Promise((r) => setTimeout(r, 0));
const range = { startSeconds: 0, endSeconds: 3600, stepSeconds: 60 };

describe("shared Prometheus client", () => {
  it("sends identical requests in flight once, reuses the answer briefly, then asks again", async () => {
    let now = 0;
    const { inner, calls } = gatedClient();
    const client = sharedClient(inner, { cacheMs: 10_000, maxConcurrent: 8, maxQueued: 8, timeoutMs: 30_000 }, () => now);
    const pending = Array.from({ length: 50 }, () => client.queryRange("up", range));
    const other = client.queryRange("up", { ...range, endSeconds: 7200 });
    await tick();
    expect(calls.map((c) => c.expr)).toEqual(["up", "up"]);
    calls.forEach((c) => c.release(true));
    const answers = await Promise.all(pending);
    expect(answers.every((a) => a.warnings[0] === "up")).toBe(true);
    await other;
    expect(client.stats).toMatchObject({ upstream: 2, coalesced: 49, cached: 0 });
    now = 9_999;
    await client.queryRange("up", range);
    expect(client.stats.cached).toBe(1);
    now = 10_000;
    const again = client.queryRange("up", range);
    await tick();
    expect(calls).toHaveLength(3);
    calls[2].release(true);
    await again;
  });

  it("never reuses a failure: the next request asks again", async () => {
    const { inner, calls } = gatedClient();
    const client = sharedClient(inner, { cacheMs: 10_000, maxConcurrent: 8, maxQueued: 8, timeoutMs: 30_000 });
    const first = client.query("x", 1);
    await tick();
    calls[0].release(false);
    await expect(first).rejects.toThrow("failed x");
    const second = client.query("x", 1);
    await tick();
    expect(calls).toHaveLength(2);
    calls[1].release(true);
    await expect(second).resolves.toMatchObject({ warnings: ["x"] });
  });

  it("runs at most maxConcurrent calls, queues maxQueued, and refuses the rest as busy", async () => {
    const { inner, calls } = gatedClient();
    const client = sharedClient(inner, { cacheMs: 0, maxConcurrent: 2, maxQueued: 1, timeoutMs: 30_000 });
    const a = client.query("a", 1);
    const b = client.query("b", 1);
    const c = client.query("c", 1);
    await expect(client.query("d", 1)).rejects.toMatchObject({ httpStatus: 503, errorType: "busy" });
    await tick();
    expect(calls.map((x) => x.expr)).toEqual(["a", "b"]);
    expect([client.active(), client.queued()]).toEqual([2, 1]);
    calls[0].release(true);
    await a;
    await tick();
    expect(calls.map((x) => x.expr)).toEqual(["a", "b", "c"]);
    calls[1].release(true);
    calls[2].release(true);
    await Promise.all([b, c]);
    expect(client.stats.busy).toBe(1);
    expect(client.active()).toBe(0);
  });

  it("counts time in the queue toward the deadline, and a call that never answers gives its slot back at its deadline", async () => {
    const { inner, calls } = gatedClient();
    const client = sharedClient(inner, { cacheMs: 0, maxConcurrent: 1, maxQueued: 4, timeoutMs: 400 });
    const startedMs = Date.now();
    const hung = client.query("hung", 1); // never released: an answer that never ends
    const queued = client.query("queued", 1);
    await tick();
    expect([client.active(), client.queued()]).toEqual([1, 1]);
    expect(client.oldestActiveMs()).toBeLessThan(400);
    await expect(hung).rejects.toMatchObject({ name: "PromError", failure: "timeout" });
    // The second times out at its own deadline from when it was asked for (about 400 ms), not 400 ms after it got a slot (800).
    await expect(queued).rejects.toMatchObject({ name: "PromError", failure: "timeout" });
    expect(Date.now() - startedMs).toBeLessThan(700);
    expect([client.active(), client.queued(), client.oldestActiveMs()]).toEqual([0, 0, 0]);
    // The pool is usable again.
    const next = client.query("next", 1);
    await tick();
    calls.at(-1)!.release(true);
    await expect(next).resolves.toMatchObject({ warnings: ["next"] });
    expect([calls[0].expr, calls.at(-1)!.expr]).toEqual(["hung", "next"]);
  });

  it("lets one caller give up without cancelling the call the others share", async () => {
    const { inner, calls } = gatedClient();
    const client = sharedClient(inner, { cacheMs: 1000, maxConcurrent: 8, maxQueued: 8, timeoutMs: 30_000 });
    const controller = new AbortController();
    const leaving = client.query("q", 1, controller.signal);
    const staying = client.query("q", 1);
    controller.abort(new Error("closed the tab"));
    await expect(leaving).rejects.toThrow("closed the tab");
    await tick();
    calls[0].release(true);
    await expect(staying).resolves.toMatchObject({ warnings: ["q"] });
  });
});
