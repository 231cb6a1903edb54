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
});
