/** The version chain on a real SQLite store: read through, bounded, saved once per batch, forgotten when a batch fails. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WriteStore } from "@/lib/store/store";
import { keptBody, VersionChain } from "@/lib/store/version-chain";
import type { ObjectKey } from "@/lib/wire/objects";

const key = (name: string): ObjectKey => ({ cluster: "c", group: "g", kind: "K", namespace: "ns", name });

function setup(capacity: number) {
  const store = new WriteStore(join(mkdtempSync(join(tmpdir(), "churnscope-chain-")), "t.sqlite"));
  const reads: string[] = [];
  const chain = new VersionChain<string>({
    read: (k) => {
      reads.push(k.name);
      return store.latest(k)?.resourceVersion;
    },
    write: (k, rv) => store.setLatest(k, rv, "{}"),
    weigh: (rv) => rv.length,
    capacity,
  });
  return { store, chain, reads };
}

describe("VersionChain", () => {
  it("saves each object's last version once, when the batch's transaction ends", () => {
    const { store, chain } = setup(100);
    chain.batch(store, () => {
      chain.set(key("a"), "1");
      chain.set(key("a"), "2");
      expect(store.latest(key("a"))).toBeUndefined();
    });
    expect(store.latest(key("a"))?.resourceVersion).toBe("2");
  });

  it("reads a miss from the store, and keeps what it read", () => {
    const { store, chain, reads } = setup(100);
    store.setLatest(key("b"), "7", "{}");
    expect(chain.get(key("b"))).toBe("7");
    expect(chain.get(key("b"))).toBe("7");
    expect(reads).toEqual(["b"]);
    expect(chain.get(key("none"))).toBeUndefined();
  });

  it("holds no more than its capacity, and a version evicted before its batch ends is still the one it answers", () => {
    const { store, chain, reads } = setup(3);
    chain.batch(store, () => {
      chain.set(key("a"), "11");
      chain.set(key("b"), "22");
      chain.set(key("c"), "33"); // a and b no longer fit
      expect(chain.get(key("a"))).toBe("11");
      expect(reads).toEqual([]);
    });
    expect(chain.get(key("b"))).toBe("22");
    expect(reads).toEqual(["b"]);
  });

  it("keeps what the store must not be told in memory only", () => {
    const { store, chain } = setup(100);
    chain.batch(store, () => chain.keep(key("a"), "5"));
    expect(chain.get(key("a"))).toBe("5");
    expect(store.latest(key("a"))).toBeUndefined();
  });

  it("forgets a failed batch: neither the store nor memory holds its versions", () => {
    const { store, chain } = setup(100);
    chain.batch(store, () => chain.set(key("a"), "1"));
    expect(() =>
      chain.batch(store, () => {
        chain.set(key("a"), "2");
        throw new Error("disk full");
      }),
    ).toThrow("disk full");
    expect(store.latest(key("a"))?.resourceVersion).toBe("1");
    expect(chain.get(key("a"))).toBe("1");
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
