/**
 * Which process records a cluster, on both store engines: a lease claimed, renewed, run out and taken over; a batch
 * of a process that lost its lease stores nothing; and two processes leading one cluster never record it at once.
 */
import { describe, expect, it } from "vitest";
import { leadCluster } from "@/lib/recorder/leadership";
import { LeaseLost } from "@/lib/store/leases";
import { storeEngines } from "../../helpers/store-engines";

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.each(storeEngines())("recorder leases on %s", (_name, engine) => {
  it("are taken when free or run out, renewed by their holder, and refused to anyone else meanwhile", async () => {
    const leases = (await engine.writeStore()).leases();
    expect(await leases.claim("hub", "a", 1_000, 20_000)).toEqual({ held: true, taken: true });
    expect(await leases.claim("hub", "b", 5_000, 20_000)).toEqual({ held: false, taken: false });
    expect(await leases.claim("hub", "a", 10_000, 20_000)).toEqual({ held: true, taken: false });
    // a's last renewal lasts to 30 s: b may not take it at 29.999 s, and may at 30.001 s.
    expect((await leases.claim("hub", "b", 29_999, 20_000)).held).toBe(false);
    expect(await leases.claim("hub", "b", 30_001, 20_000)).toEqual({ held: true, taken: true });
    await expect(leases.check("hub", "a", 30_002)).rejects.toThrow(LeaseLost);
    await expect(leases.check("hub", "b", 30_002)).resolves.toBeUndefined();
    // Another cluster is a lease of its own; a release frees the lease at once.
    expect((await leases.claim("edge", "a", 30_002, 20_000)).held).toBe(true);
    await leases.release("hub", "b");
    expect((await leases.claim("hub", "a", 30_003, 20_000)).held).toBe(true);
    expect((await leases.holders()).map((l) => [l.cluster, l.holder])).toEqual([
      ["edge", "a"],
      ["hub", "a"],
    ]);
  });

  it("refuses a batch of a process that lost its lease, and stores nothing of it", async () => {
    const store = await engine.writeStore();
    const leases = store.leases();
    const now = Date.now();
    await leases.claim("hub", "old", now - 60_000, 20_000);
    await leases.claim("hub", "new", now, 20_000);
    const key = { cluster: "hub", group: "g", kind: "K", namespace: "ns", name: "n" };
    const write = { tsMs: now, cls: "unrouted" as const, writer: "w", source: "watch" as const, heartbeat: false, changes: [], projection: {} };
    await expect(
      store.batch(async () => {
        await store.record(key, write);
        await leases.check("hub", "old", Date.now());
      }),
    ).rejects.toThrow(LeaseLost);
    expect(await store.writesOf(key, 0, now + 1, 10)).toEqual([]);
  });

  it("lets one of two processes record a cluster at a time, and the other take over when it stops or stops renewing", async () => {
    const store = await engine.writeStore();
    const timing = { ttlMs: 600, renewMs: 100 };
    /** Each process's recording periods, as [start, end] times. */
    const periods = new Map<string, [number, number | null][]>([
      ["p1", []],
      ["p2", []],
    ]);
    // A process whose database stops answering: its claims fail, as a process that was killed makes none.
    let p1Cut = false;
    const leasesOf = (name: string) => {
      const leases = store.leases();
      return name === "p2"
        ? leases
        : Object.assign(Object.create(leases) as typeof leases, {
            claim: (...args: Parameters<typeof leases.claim>) => (p1Cut ? Promise.reject(new Error("connection refused")) : leases.claim(...args)),
          });
    };
    const lead = (name: string) =>
      leadCluster(
        leasesOf(name),
        "hub",
        () => {
          periods.get(name)!.push([Date.now(), null]);
          return async () => void (periods.get(name)!.at(-1)![1] = Date.now());
        },
        () => undefined,
        timing,
        name,
      );
    const p1 = lead("p1");
    await sleep(150);
    const p2 = lead("p2");
    await sleep(500);
    expect([p1.leads(), p2.leads()]).toEqual([true, false]);
    // p1 can no longer renew: it stops once its lease would have run out, and p2 takes over within ttl + renew.
    const cutMs = Date.now();
    p1Cut = true;
    await sleep(timing.ttlMs + 3 * timing.renewMs);
    expect([p1.leads(), p2.leads()]).toEqual([false, true]);
    const [p1Period] = periods.get("p1")!;
    const [p2Period] = periods.get("p2")!;
    expect(p2Period[0] - cutMs).toBeLessThanOrEqual(timing.ttlMs + 2 * timing.renewMs);
    // Never both at once: p1 had stopped before p2 began.
    expect(p1Period[1]).not.toBeNull();
    expect(p1Period[1]!).toBeLessThanOrEqual(p2Period[0]);
    // A clean stop hands over at once.
    p1Cut = false;
    await p2.stop();
    await sleep(2 * timing.renewMs + 50);
    expect(p1.leads()).toBe(true);
    await p1.stop();
  });

  it("takes a cluster over again, relisting, when its own lease ran out while the database could not be reached", async () => {
    const store = await engine.writeStore();
    const leases = store.leases();
    const timing = { ttlMs: 300, renewMs: 50 };
    let cut = false;
    const flaky = Object.assign(Object.create(leases) as typeof leases, {
      claim: (...args: Parameters<typeof leases.claim>) => (cut ? Promise.reject(new Error("connection refused")) : leases.claim(...args)),
    });
    const starts: boolean[] = [];
    const leading = leadCluster(
      flaky,
      "hub",
      (_guard, takeover) => {
        starts.push(takeover);
        return async () => undefined;
      },
      () => undefined,
      timing,
      "only",
    );
    await sleep(150);
    cut = true;
    await sleep(timing.ttlMs + 3 * timing.renewMs);
    expect(leading.leads()).toBe(false);
    cut = false;
    await sleep(3 * timing.renewMs);
    // Its first start took a free lease; the second found its own, run out: a takeover all the same.
    expect(starts).toEqual([true, true]);
    await leading.stop();
  });

  it("stops recording when its lease runs out unrenewed, not at the renewal after", async () => {
    const leases = (await engine.writeStore()).leases();
    // Claimed at 0 (held to 400 ms), refused at 350, and next asked at 700: the lease's end falls between two turns.
    const timing = { ttlMs: 400, renewMs: 350 };
    let cut = false;
    let claimedMs = 0;
    const flaky = Object.assign(Object.create(leases) as typeof leases, {
      claim: async (...args: Parameters<typeof leases.claim>) => {
        if (cut) throw new Error("connection refused");
        const claim = await leases.claim(...args);
        claimedMs = args[2];
        return claim;
      },
    });
    let stoppedMs: number | undefined;
    const leading = leadCluster(
      flaky,
      "hub",
      () => async () => void (stoppedMs = Date.now()),
      () => undefined,
      timing,
      "only",
    );
    await sleep(100);
    expect(leading.leads()).toBe(true);
    cut = true;
    await sleep(timing.ttlMs + timing.renewMs + 100);
    expect(stoppedMs).toBeDefined();
    // At the lease's end (another process may record from then on), well before the turn after it.
    expect(stoppedMs! - claimedMs).toBeGreaterThanOrEqual(timing.ttlMs - 5);
    expect(stoppedMs! - claimedMs).toBeLessThan(timing.ttlMs + timing.renewMs / 2);
    await leading.stop();
  });
});
