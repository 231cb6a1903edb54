/** What the server opens at start: handed out only once open, a 503 saying why until then, opened again on the next try. */
import { describe, expect, it } from "vitest";
import { OpenedAtStart } from "@/lib/runtime/opened-at-start";

describe("OpenedAtStart", () => {
  it("is a 503 until opened, never opens when asked for, and says what failed", async () => {
    let attempts = 0;
    let mounted = false;
    const store = new OpenedAtStart("the live object store", () => {
      attempts++;
      if (!mounted) throw new Error("EACCES: /data");
      return { id: attempts };
    });
    expect(() => store.get()).toThrow(expect.objectContaining({ httpStatus: 503, errorType: "store_unavailable" }));
    expect(attempts).toBe(0);
    await expect(store.open()).rejects.toThrow("EACCES: /data");
    expect(() => store.get()).toThrow("the live object store is not open (EACCES: /data); the server tries again every 30 s, see its log");
    mounted = true;
    expect(await store.open()).toEqual({ id: 2 });
    expect(store.get()).toBe(await store.open());
    expect([attempts, store.opened]).toEqual([2, true]);
  });

  it("opens once when asked twice while opening (a slow database)", async () => {
    let attempts = 0;
    const store = new OpenedAtStart("the live object store", async () => {
      attempts++;
      await new Promise((resolve) => setTimeout(resolve, 20));
      return { id: attempts };
    });
    const [first, second] = await Promise.all([store.open(), store.open()]);
    expect(first).toBe(second);
    expect(attempts).toBe(1);
  });
});
