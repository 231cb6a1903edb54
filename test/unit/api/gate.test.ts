/** The gate in front of snapshot checks and Prometheus queries: bounded running and waiting, slots handed on in order. */
import { describe, expect, it } from "vitest";
import { BusyFailure, Gate } from "@/lib/api/gate";

const tick = () => new Promise((r) => setTimeout(r, 0));

describe("Gate", () => {
  it("runs at most maxRunning, queues maxWaiting in order, refuses the rest, and never runs more than allowed", async () => {
    const gate = new Gate(2, 2, (running, waiting) => new BusyFailure(`${running} running, ${waiting} waiting`, 7));
    let running = 0;
    let most = 0;
    const started: number[] = [];
    const releases: (() => void)[] = [];
    const task = (n: number) => () =>
      new Promise<number>((resolve) => {
        started.push(n);
        most = Math.max(most, ++running);
        releases[n] = () => {
          running--;
          resolve(n);
        };
      });
    const runs = [0, 1, 2, 3].map((n) => gate.run(task(n)));
    await expect(gate.run(task(4))).rejects.toMatchObject({ httpStatus: 503, errorType: "busy", message: "2 running, 2 waiting", retryAfterSeconds: 7 });
    await tick();
    expect([started, gate.active, gate.queued]).toEqual([[0, 1], 2, 2]);
    releases[1]();
    await tick();
    // A new task arriving as a slot is handed on waits its turn behind the queue.
    const late = gate.run(task(5));
    await tick();
    expect([started, gate.active, gate.queued]).toEqual([[0, 1, 2], 2, 2]);
    for (const n of [0, 2, 3, 5]) {
      releases[n]?.();
      await tick();
    }
    await expect(Promise.all([...runs, late])).resolves.toEqual([0, 1, 2, 3, 5]);
    expect([started, most, gate.active, gate.queued]).toEqual([[0, 1, 2, 3, 5], 2, 0, 0]);
  });
});
