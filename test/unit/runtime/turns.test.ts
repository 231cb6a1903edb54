import { describe, expect, it } from "vitest";
import { Turns } from "@/lib/runtime/turns";

const tick = () => new Promise((resolve) => setTimeout(resolve, 1));

describe("Turns", () => {
  it("runs each piece of work after the one asked for before it has ended, failed or not, counts what is asked for, and says when all of it has ended", async () => {
    const turns = new Turns();
    const log: string[] = [];
    const work =
      (name: string, fail = false) =>
      async () => {
        log.push(`start ${name}`);
        await tick();
        log.push(`end ${name}`);
        if (fail) throw new Error(name);
        return name;
      };
    const a = turns.run(work("a"));
    const b = turns.run(work("b", true));
    const c = turns.run(work("c"));
    expect(turns.waiting).toBe(3);
    const ended = turns.ended().then(() => log.push("all ended"));
    expect(await a).toBe("a");
    await expect(b).rejects.toThrow("b");
    expect(await c).toBe("c");
    await ended;
    expect(log).toEqual(["start a", "end a", "start b", "end b", "start c", "end c", "all ended"]);
    expect(turns.waiting).toBe(0);
  });

  it("holds a turn asked for now from when it comes until it is released, released early or not", async () => {
    const turns = new Turns();
    const log: string[] = [];
    const first = turns.run(async () => {
      await tick();
      log.push("first ends");
    });
    const held = turns.hold();
    const after = turns.run(async () => void log.push("after runs"));
    void held.entered.then(() => log.push("held entered"));
    await first;
    await tick();
    expect(log).toEqual(["first ends", "held entered"]);
    held.release();
    await after;
    expect(log).toEqual(["first ends", "held entered", "after runs"]);
    // Released before its turn came: it passes straight on.
    const early = turns.hold();
    early.release();
    await early.entered;
    await turns.run(async () => void log.push("next runs"));
    expect(log.at(-1)).toBe("next runs");
    expect(turns.waiting).toBe(0);
  });
});
