/** The version chain on both store engines: read through, bounded, saved once per batch, forgotten when a batch fails, batches in turn, a batch compared while the one before it stores. */
import { describe, expect, it } from "vitest";
import { keptBody, VersionChain } from "@/lib/store/version-chain";
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

  /** A promise and what settles it: a transaction held open until the test says. */
  const gate = () => {
    let open!: () => void;
    const opened = new Promise<void>((resolve) => (open = resolve));
    return { open, opened };
  };

  it("compares a batch while the one before it stores, and stores them in turn", async () => {
    const { store, chain } = await setup(1);
    const order: string[] = [];
    const held = gate();
    const comparedB = gate();
    const first = chain.batch(
      store,
      async () => {
        await held.opened;
        order.push("A stored");
      },
      [],
      async () => {
        chain.set(key("a"), "1");
        chain.set(key("z"), "9"); // a no longer fits in memory: only the batch still storing it knows it
      },
    );
    const second = chain.batch(
      store,
      async (seen: string | undefined) => order.push(`B stores after ${seen}`),
      [],
      async () => {
        const seen = await chain.get(key("a"));
        order.push(`B compared against ${seen}`);
        chain.set(key("a"), "2");
        comparedB.open();
        return seen;
      },
    );
    await comparedB.opened;
    expect(await store.latest(key("a"))).toBeUndefined(); // A's transaction is still open
    held.open();
    await Promise.all([first, second]);
    expect(order).toEqual(["B compared against 1", "A stored", "B stores after 1"]);
    expect((await store.latest(key("a")))?.resourceVersion).toBe("2");
  });

  it("fails every batch asked for before a failure with its error, and compares the next against the store", async () => {
    const { store, chain } = await setup(100);
    await chain.batch(store, async () => chain.set(key("a"), "1"));
    const held = gate();
    const failing = chain.batch(
      store,
      async () => {
        await held.opened;
        throw new Error("disk full");
      },
      [],
      async () => chain.set(key("a"), "2"),
    );
    const seenByLater: (string | undefined)[] = [];
    const later = chain.batch(
      store,
      async () => undefined,
      [],
      async () => {
        seenByLater.push(await chain.get(key("a")));
        chain.set(key("a"), "3");
      },
    );
    await Promise.resolve();
    held.open();
    await expect(failing).rejects.toThrow("disk full");
    await expect(later).rejects.toThrow("disk full");
    expect(seenByLater).toEqual(["2"]); // compared against the failed batch's version: why it must fail too
    expect((await store.latest(key("a")))?.resourceVersion).toBe("1");
    let seenAfter: string | undefined;
    await chain.batch(
      store,
      async () => undefined,
      [],
      async () => {
        seenAfter = await chain.get(key("a"));
        chain.set(key("a"), "4");
      },
    );
    expect(seenAfter).toBe("1");
    expect((await store.latest(key("a")))?.resourceVersion).toBe("4");
  });

  it("fails the batches after one that cannot compare, and keeps what the batch before it is storing", async () => {
    const { store, chain } = await setup(1);
    const held = gate();
    const storing = chain.batch(
      store,
      () => held.opened,
      [],
      async () => chain.set(key("a"), "1"),
    );
    const unreadable = chain.batch(
      store,
      async () => undefined,
      [],
      async () => {
        throw new Error("unreadable event");
      },
    );
    const after = chain.batch(
      store,
      async () => undefined,
      [],
      async () => chain.set(key("a"), "never"),
    );
    await expect(unreadable).rejects.toThrow("unreadable event");
    await expect(after).rejects.toThrow("unreadable event");
    // Asked for after the failure while the first batch still stores: it compares against that batch's version.
    let seen: string | undefined;
    const next = chain.batch(
      store,
      async () => undefined,
      [],
      async () => {
        seen = await chain.get(key("a"));
        chain.set(key("a"), "2");
      },
    );
    held.open();
    await Promise.all([storing, next]);
    expect(seen).toBe("1");
    expect((await store.latest(key("a")))?.resourceVersion).toBe("2");
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
