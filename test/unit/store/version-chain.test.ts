/** The version chain on both store engines: read through, bounded, saved once per batch, forgotten when a batch fails, batches in turn. */
import { describe, expect, it } from "vitest";
import { keptBody, VersionChain, type Transactional } from "@/lib/store/version-chain";
import type { ObjectKey } from "@/lib/wire/objects";
import { storeEngines } from "../../helpers/store-engines";

const key = (name: string): ObjectKey => ({ cluster: "c", group: "g", kind: "K", namespace: "ns", name });

describe.each(storeEngines())("VersionChain on %s", (_name, engine) => {
  async function setup(capacity: number) {
    const store = await engine.writeStore();
    const reads: string[] = [];
    const chain = new VersionChain<string>({
      read: async (k) => {
        reads.push(k.name);
        return (await store.latest(k))?.resourceVersion;
      },
      write: (k, rv) => store.setLatest(k, rv, "{}"),
      weigh: (rv) => rv.length,
      capacity,
    });
    return { store, chain, reads };
  }

  /** A batch that sets a to 1 as it is compared, its transaction held until `release`. */
  function heldBatch(store: Transactional, chain: VersionChain<string>) {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    return {
      batch: chain.batch(
        store,
        () => held,
        [],
        async () => void chain.set(key("a"), "1"),
      ),
      release,
    };
  }

  it("saves each object's last version once, when the batch's transaction ends", async () => {
    const { store, chain } = await setup(100);
    await chain.batch(store, async () => {
      chain.set(key("a"), "1");
      chain.set(key("a"), "2");
      expect(await store.latest(key("a"))).toBeUndefined();
    });
    expect((await store.latest(key("a")))?.resourceVersion).toBe("2");
  });

  it("reads a miss from the store, and keeps what it read", async () => {
    const { store, chain, reads } = await setup(100);
    await store.setLatest(key("b"), "7", "{}");
    expect(await chain.get(key("b"))).toBe("7");
    expect(await chain.get(key("b"))).toBe("7");
    expect(reads).toEqual(["b"]);
    expect(await chain.get(key("none"))).toBeUndefined();
  });

  it("holds no more than its capacity, and a version evicted before its batch ends is still the one it answers", async () => {
    const { store, chain, reads } = await setup(3);
    await chain.batch(store, async () => {
      chain.set(key("a"), "11");
      chain.set(key("b"), "22");
      chain.set(key("c"), "33"); // a and b no longer fit
      expect(await chain.get(key("a"))).toBe("11");
      expect(reads).toEqual([]);
    });
    expect(await chain.get(key("b"))).toBe("22");
    expect(reads).toEqual(["b"]);
  });

  it("keeps what the store must not be told in memory only", async () => {
    const { store, chain } = await setup(100);
    await chain.batch(store, async () => chain.keep(key("a"), "5"));
    expect(await chain.get(key("a"))).toBe("5");
    expect(await store.latest(key("a"))).toBeUndefined();
  });

  it("forgets a failed batch: neither the store nor memory holds its versions", async () => {
    const { store, chain } = await setup(100);
    await chain.batch(store, async () => chain.set(key("a"), "1"));
    await expect(
      chain.batch(store, async () => {
        chain.set(key("a"), "2");
        throw new Error("disk full");
      }),
    ).rejects.toThrow("disk full");
    expect((await store.latest(key("a")))?.resourceVersion).toBe("1");
    expect(await chain.get(key("a"))).toBe("1");
  });

  it("runs batches asked for together one after another, each seeing the one before it", async () => {
    const { store, chain } = await setup(100);
    const seen: (string | undefined)[] = [];
    await Promise.all(
      ["1", "2", "3"].map((rv) =>
        chain.batch(store, async () => {
          seen.push(await chain.get(key("a")));
          // A batch that awaits in its middle still ends before the next begins.
          await new Promise((resolve) => setTimeout(resolve, 5));
          chain.set(key("a"), rv);
        }),
      ),
    );
    expect(seen).toEqual([undefined, "1", "2"]);
    expect((await store.latest(key("a")))?.resourceVersion).toBe("3");
  });

  it("compares a batch while the one before it is stored, answering what that one set, and stores them in order", async () => {
    const { store, chain } = await setup(100);
    const steps: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const first = chain.batch(
      store,
      async () => {
        steps.push("store 1");
        await held;
        expect(await store.latest(key("a"))).toBeUndefined();
      },
      [],
      async () => void chain.set(key("a"), "1"),
    );
    const second = chain.batch(
      store,
      async (seen: string | undefined) => {
        steps.push(`store 2 after ${seen}`);
        expect((await store.latest(key("a")))?.resourceVersion).toBe("1");
      },
      [],
      async () => {
        const seen = await chain.get(key("a"));
        steps.push("compare 2");
        chain.set(key("a"), "2");
        return seen;
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    // (On PostgreSQL the first batch's work starts once its transaction has begun: either may come first.)
    expect([...steps].sort()).toEqual(["compare 2", "store 1"]);
    release();
    await Promise.all([first, second]);
    expect(steps.at(-1)).toBe("store 2 after 1");
    expect((await store.latest(key("a")))?.resourceVersion).toBe("2");
  });

  it("answers a version set by a batch not yet stored after memory let it go", async () => {
    const { store, chain, reads } = await setup(2);
    const { batch: first, release } = heldBatch(store, chain);
    const second = chain.batch(
      store,
      async (seen: string | undefined) => seen,
      [],
      async () => {
        chain.set(key("b"), "22"); // a no longer fits in memory
        return chain.get(key("a"));
      },
    );
    release();
    await first;
    expect(await second).toBe("1");
    expect(reads).toEqual([]);
  });

  it("does not store a batch compared against one that then failed, and forgets both", async () => {
    const { store, chain } = await setup(100);
    await chain.batch(store, async () => chain.set(key("a"), "1"));
    let fail!: (error: Error) => void;
    const failing = new Promise<void>((_resolve, reject) => (fail = reject));
    const first = chain.batch(
      store,
      () => failing,
      [],
      async () => void chain.set(key("a"), "2"),
    );
    let compared = false;
    const second = chain.batch(
      store,
      async () => chain.set(key("b"), "never"),
      [],
      async () => {
        chain.set(key("a"), (await chain.get(key("a"))) === "2" ? "3" : "wrong");
        compared = true;
      },
    );
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(compared).toBe(true);
    fail(new Error("disk full"));
    await expect(first).rejects.toThrow("disk full");
    await expect(second).rejects.toThrow(/earlier batch failed/);
    expect((await store.latest(key("a")))?.resourceVersion).toBe("1");
    expect(await store.latest(key("b"))).toBeUndefined();
    expect(await chain.get(key("a"))).toBe("1");
    // A batch asked for after the failure compares against the store.
    await chain.batch(
      store,
      async () => undefined,
      [],
      async () => void chain.set(key("a"), `${await chain.get(key("a"))}+`),
    );
    expect((await store.latest(key("a")))?.resourceVersion).toBe("1+");
  });

  it("fails only its own batch when its comparing step fails, and a batch without one waits for those before it", async () => {
    const { store, chain } = await setup(100);
    const { batch: first, release } = heldBatch(store, chain);
    const broken = chain.batch(
      store,
      async () => undefined,
      [],
      async () => {
        chain.set(key("a"), "bad");
        throw new Error("unreadable");
      },
    );
    const steps: (string | undefined)[] = [];
    const after = chain.batch(store, async () => {
      steps.push((await store.latest(key("a")))?.resourceVersion);
      chain.set(key("c"), "9");
    });
    await new Promise((resolve) => setTimeout(resolve, 20));
    expect(steps).toEqual([]);
    release();
    await expect(broken).rejects.toThrow("unreadable");
    await Promise.all([first, after]);
    expect(steps).toEqual(["1"]);
    expect((await store.latest(key("a")))?.resourceVersion).toBe("1");
    expect((await store.latest(key("c")))?.resourceVersion).toBe("9");
  });

  it("keeps the order batches were asked for, with and without a comparing step, asked for in one go", async () => {
    const { store, chain } = await setup(100);
    const appended = (suffix: string) => async () => void chain.set(key("a"), `${(await chain.get(key("a"))) ?? ""}${suffix}`);
    await Promise.all([
      chain.batch(store, appended("1")),
      chain.batch(store, async () => undefined, [], appended("2")),
      chain.batch(store, appended("3")),
      chain.batch(store, async () => undefined, [], appended("4")),
      chain.batch(store, async () => undefined, [], appended("5")),
      chain.batch(store, appended("6")),
    ]);
    expect((await store.latest(key("a")))?.resourceVersion).toBe("123456");
  });

  it("refuses a version set outside any batch, which would never be saved", async () => {
    const { chain } = await setup(100);
    expect(() => chain.set(key("a"), "1")).toThrow(/outside a batch/);
  });
});

describe("keptBody", () => {
  it("keeps the created object and the deleted one's last version, and nothing for other writes", () => {
    const before = { v: 1 };
    const after = { v: 2 };
    expect(keptBody("create", undefined, after)).toBe(after);
    expect(keptBody("delete", before, undefined)).toBe(before);
    for (const cls of ["routed", "unrouted", "no-op", "unknown"] as const) expect(keptBody(cls, before, after)).toBeUndefined();
  });
});
