/** Liveness: green while the Prometheus query pool makes progress, red once a slot is held well past its deadline. */
import { afterEach, describe, expect, it } from "vitest";
import { liveness } from "@/lib/server/context";

const KEY = Symbol.for("churnscope.serverContext");
const holder = globalThis as Record<symbol, unknown>;

function withPool(heldMs: number, timeoutMs = 30_000) {
  holder[KEY] = { config: { prometheus: { timeoutMs } }, prometheus: { client: { oldestActiveMs: () => heldMs } } };
}

afterEach(() => {
  delete holder[KEY];
});

describe("liveness", () => {
  it("is green before anything is built, without Prometheus, and while slots are held within their deadline and grace", () => {
    expect(liveness()).toEqual({ live: true });
    holder[KEY] = { config: { prometheus: null }, prometheus: null };
    expect(liveness()).toEqual({ live: true });
    for (const heldMs of [0, 29_000, 59_000]) {
      withPool(heldMs);
      expect(liveness().live).toBe(true);
    }
  });

  it("is red, saying why, once a slot is held past its deadline and the grace", () => {
    withPool(95_000);
    expect(liveness()).toEqual({ live: false, reason: "a Prometheus query slot has been held for 95 s, past its 30 s deadline" });
  });
});
