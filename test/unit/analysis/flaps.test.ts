import { describe, expect, it } from "vitest";
import { flapsOf, holdDown, type ChangeRun } from "@/lib/analysis/flaps";

const key = (name: string) => ({ cluster: "milo", group: "networking.datumapis.com", kind: "Connector", namespace: "p", name });
const ON = JSON.stringify({ online: "true", nodeId: "n1" });
const OFF = JSON.stringify({ online: "false", nodeId: "" });
const S = 1_000;
const range = { startMs: 0, endMs: 3_600 * S };

/** A run from (seconds, state) pairs. */
const run = (name: string, initial: string | undefined, ...changes: [number, string][]): ChangeRun => ({
  key: key(name),
  initial,
  changes: changes.map(([s, projection]) => ({ tsMs: s * S, projection })),
});

describe("flaps", () => {
  it("counts a change undone within the window, its time in the other state, and each change once", () => {
    // a: off 10 s then on (a flap), later off for good; b: off 100 s (outside a 60 s window); c: on→off→on→off, 5 s each (two flaps, three changes).
    const runs = [run("a", ON, [100, OFF], [110, ON], [2_000, OFF]), run("b", ON, [100, OFF], [200, ON]), run("c", ON, [10, OFF], [15, ON], [20, OFF])];
    const figures = flapsOf(runs, 60 * S, range);
    expect(figures).toMatchObject({ changes: 8, flaps: 3, flapChanges: 5, objectsFlapping: 2, flapsPerHour: 3, medianInStateMs: 5 * S });
    expect(figures.top.map((o) => [o.key.name, o.flaps, o.shortestMs])).toEqual([
      ["c", 2, 5 * S],
      ["a", 1, 10 * S],
    ]);
    expect(figures.byKind).toEqual([{ group: "networking.datumapis.com", kind: "Connector", flaps: 3, objects: 2 }]);
    // Per minute: c's three changes and a's first two were halves of flaps; b's two and a's last lasted.
    const nonZero = (values: number[]) => Object.fromEntries(values.flatMap((v, i) => (v ? [[i, v]] : [])));
    expect(figures.steps.stepMs).toBe(60 * S);
    expect(nonZero(figures.steps.flap)).toEqual({ 0: 3, 1: 2 });
    expect(nonZero(figures.steps.lasting)).toEqual({ 1: 1, 3: 1, 33: 1 });
  });

  it("needs the state before the first change to call the second its undoing", () => {
    expect(flapsOf([run("a", undefined, [100, OFF], [110, ON])], 60 * S, range).flaps).toBe(0);
    expect(flapsOf([run("a", ON, [100, OFF], [110, ON])], 60 * S, range).flaps).toBe(1);
  });
});

describe("hold-down what-if", () => {
  const rule = { field: "online", value: "false", holdMs: 30 * S };

  it("absorbs an offline that comes back within the hold, passes one that lasts exactly the hold late, and passes online at once", () => {
    const runs = [
      run("a", ON, [100, OFF], [110, ON]), // absorbed: no rebuild at all
      run("b", ON, [100, OFF], [500, ON]), // offline reaches the consumer at 130 s, online at once at 500 s
      run("c", OFF, [100, ON]), // online at once
    ];
    expect(holdDown(runs, rule, range.endMs)).toEqual({ rule, rebuildsWithout: 5, rebuildsWith: 3, absorbed: 1, delayed: 1, immediate: 2, stillHeld: 0 });
  });

  it("counts the hold from the first held change, passes a held one once the next change shows it lasted, and says what is still held at the end", () => {
    const offOther = JSON.stringify({ online: "false", nodeId: "x" });
    // Offline at 100 s, still offline (another value) at 120 s, then online at 140 s: held since 100 s, so it passed at 130 s.
    const lasted = holdDown([run("a", ON, [100, OFF], [120, offOther], [140, ON])], rule, range.endMs);
    expect(lasted).toMatchObject({ rebuildsWithout: 3, rebuildsWith: 2, delayed: 1, immediate: 1, absorbed: 0 });
    const atEnd = holdDown([run("a", ON, [3_590, OFF])], rule, range.endMs);
    expect(atEnd).toMatchObject({ rebuildsWith: 0, stillHeld: 1 });
  });
});
