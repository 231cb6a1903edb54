import { describe, expect, it } from "vitest";
import { listAfterOf, planPoll, SETTLE_MS, type ListedObject } from "@/lib/audit/bucket";

const HOUR = 3_600_000;
const NOW = Date.UTC(2026, 11, 4, 12);
const RETAINED_FROM = NOW - 14 * 24 * HOUR;
const object = (key: string, ageHours: number, etag = `"${key}"`): ListedObject => ({ key, etag, size: 100, modifiedMs: NOW - ageHours * HOUR });

describe("planPoll", () => {
  it("reads what is new or rewritten, never what retention would drop, and counts the rest", () => {
    const listed = [object("a", 400), object("b", 30), object("c", 2, '"c-2"'), object("d", 1)];
    const done = new Map([
      ["b", '"b"'],
      ["c", '"c-1"'], // read before it was written again under the same key
    ]);
    const plan = planPoll(listed, done, RETAINED_FROM);
    expect(plan.toRead.map((o) => o.key)).toEqual(["c", "d"]);
    expect(plan.tooOld).toBe(1);
    expect(plan.alreadyRead).toBe(1);
  });
});

describe("listAfterOf", () => {
  it("moves past the start of the listing that is done and a day old, and no further", () => {
    const listed = [object("a", 400), object("b", 48), object("c", 25), object("d", 23), object("e", 30)];
    expect(listAfterOf(listed, () => true, NOW, RETAINED_FROM)).toBe("c");
  });

  it("stops before an object not done, however old", () => {
    const listed = [object("a", 48), object("b", 47), object("c", 46)];
    expect(listAfterOf(listed, (o) => o.key !== "b", NOW, RETAINED_FROM)).toBe("a");
    expect(listAfterOf(listed, (o) => o.key !== "a", NOW, RETAINED_FROM)).toBeNull();
  });

  it("passes objects older than retention whether or not they were read", () => {
    const listed = [object("a", 400), object("b", 399), object("c", 1)];
    expect(listAfterOf(listed, () => false, NOW, RETAINED_FROM)).toBe("b");
  });

  it("counts the day from the object's modification time", () => {
    const justSettled = { key: "a", etag: "x", size: 1, modifiedMs: NOW - SETTLE_MS };
    const notYet = { key: "a", etag: "x", size: 1, modifiedMs: NOW - SETTLE_MS + 1 };
    expect(listAfterOf([justSettled], () => true, NOW, RETAINED_FROM)).toBe("a");
    expect(listAfterOf([notYet], () => true, NOW, RETAINED_FROM)).toBeNull();
  });
});
