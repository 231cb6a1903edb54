import { describe, expect, it } from "vitest";
import { joinInFlight } from "@/lib/runtime/in-flight";

describe("joinInFlight", () => {
  it("runs the work once for all who ask while it runs, and again once it has settled, a failure included", async () => {
    const running = new Map<string, Promise<number>>();
    let runs = 0;
    let fail = true;
    const work = async () => {
      const run = ++runs;
      await new Promise((resolve) => setTimeout(resolve, 10));
      if (fail) throw new Error("no thread");
      return run;
    };
    const failed = await Promise.allSettled([joinInFlight(running, "a", work), joinInFlight(running, "a", work)]);
    expect(failed.map((r) => r.status)).toEqual(["rejected", "rejected"]);
    expect(runs).toBe(1);
    expect(running.size).toBe(0);
    fail = false;
    await expect(Promise.all([joinInFlight(running, "a", work), joinInFlight(running, "b", work), joinInFlight(running, "a", work)])).resolves.toEqual([
      2, 3, 2,
    ]);
    expect(runs).toBe(3);
  });
});
