import { describe, expect, it, vi } from "vitest";

describe("perProcess", () => {
  it("makes a value once per name, and two copies of the module share it", async () => {
    const first = await import("@/lib/runtime/per-process");
    let made = 0;
    const a = first.perProcess("test.shared", () => ({ n: ++made }));
    expect(first.perProcess("test.shared", () => ({ n: ++made }))).toBe(a);
    expect(first.perProcess("test.other", () => ({ n: ++made }))).not.toBe(a);
    vi.resetModules();
    const second = await import("@/lib/runtime/per-process");
    expect(second).not.toBe(first);
    expect(second.perProcess("test.shared", () => ({ n: ++made }))).toBe(a);
    expect(made).toBe(2);
  });

  it("keeps nothing when making the value fails, so the next call tries again", async () => {
    const { perProcess } = await import("@/lib/runtime/per-process");
    expect(() =>
      perProcess("test.failing", () => {
        throw new Error("no config");
      }),
    ).toThrow("no config");
    expect(perProcess("test.failing", () => "made")).toBe("made");
  });
});
