/** The watcher's queue of bursts on both store engines: handed over as they arrive, stored in order, an unreadable event skipped in its place. */
import { describe, expect, it } from "vitest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { BurstQueue, type WatchEvent } from "@/lib/recorder/bursts";
import { ProfileRecorder } from "@/lib/recorder/core";
import { storeEngines } from "../../helpers/store-engines";

/** One lease renewed at each resourceVersion: each write is compared with the one before it, so order shows in what is stored. */
const renewal = (rv: number): WatchEvent => ({
  type: "MODIFIED",
  obj: {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: { name: "a", namespace: "ns", resourceVersion: String(rv) },
    spec: { renewTime: `t${rv}` },
  },
  tsMs: 1000 + rv,
});

/** An event whose object throws when its spec is read: the recorder cannot compare it (a real watch never sends one; the fault does). */
function unreadable(rv: number): WatchEvent {
  const event = renewal(rv);
  Object.defineProperty(event.obj, "spec", {
    enumerable: true,
    get() {
      throw new Error("cannot read this object");
    },
  });
  return event;
}

describe.each(storeEngines())("the watcher's bursts on %s", (_name, engine) => {
  async function setup() {
    const store = await engine.writeStore();
    const recorder = new ProfileRecorder(
      store,
      "c1",
      DEFAULT_PROFILES.filter((p) => p.name === "lease"),
    );
    // How many bursts the recorder holds at once: more than one means a burst was handed over before the last was stored.
    let holding = 0;
    let mostHeld = 0;
    const refusals: (() => void)[] = [];
    const counting = {
      async applyEvents(events: WatchEvent[]) {
        mostHeld = Math.max(mostHeld, ++holding);
        try {
          return await recorder.applyEvents(events);
        } catch (error) {
          refusals.shift()?.();
          throw error;
        } finally {
          holding--;
        }
      },
    };
    const stats = { stored: 0, rejected: 0, error: undefined as string | undefined };
    const failures: unknown[] = [];
    let ended!: () => void;
    const end = new Promise<void>((resolve) => (ended = resolve));
    const bursts = new BurstQueue(counting, stats, (error) => (failures.push(error), ended()));
    const storedVersions = async () => (await store.database.sql().all<{ rv: string }>("SELECT rv FROM writes ORDER BY id")).map((w) => Number(w.rv));
    /** `then` runs, as a watch event would, on the next turn after the recorder's first refusal. */
    const onRefusal = (then: () => void) => refusals.push(() => setImmediate(then));
    return { store, recorder, bursts, stats, failures, end, onRefusal, storedVersions, mostHeld: () => mostHeld };
  }

  it("hands each burst over as it arrives, and stores them in the order they came", async () => {
    const { recorder, bursts, stats, failures, storedVersions, mostHeld } = await setup();
    await recorder.applyList([], "0", 1000);
    let last: Promise<void> = Promise.resolve();
    for (let rv = 1; rv <= 20; rv += 2) last = bursts.add([renewal(rv), renewal(rv + 1)]);
    await last;
    expect(await storedVersions()).toEqual(Array.from({ length: 20 }, (_, i) => i + 1));
    expect(stats).toMatchObject({ stored: 20, rejected: 0 });
    expect(failures).toEqual([]);
    expect(mostHeld()).toBeGreaterThan(1);
    expect(await recorder.resumeVersion()).toBe("20");
  });

  it("skips and counts an event it cannot read, and stores every other event, in order, before and after it", async () => {
    const { recorder, bursts, stats, failures, onRefusal, storedVersions } = await setup();
    await recorder.applyList([], "0", 1000);
    // One more burst arrives as soon as the refusal is known, while the bursts before it are yet to be stored again.
    const last = new Promise<void>((resolve) => onRefusal(() => resolve(bursts.add([renewal(9), renewal(10)]))));
    void bursts.add([renewal(1), renewal(2)]);
    void bursts.add([renewal(3), unreadable(4), renewal(5)]);
    void bursts.add([renewal(6), renewal(7)]);
    void bursts.add([renewal(8)]);
    await last;
    expect(await storedVersions()).toEqual([1, 2, 3, 5, 6, 7, 8, 9, 10]);
    expect(stats.stored).toBe(9);
    expect(stats.rejected).toBe(1);
    expect(stats.error).toMatch(/skipped a watch event: cannot read this object/);
    expect(failures).toEqual([]);
  });

  it("ends when the store refuses, after what was handed over has settled; the next queue stores them again", async () => {
    const { store, recorder, bursts, stats, failures, end, storedVersions } = await setup();
    await recorder.applyList([], "0", 1000);
    await bursts.add([renewal(1)]);
    // The database refuses writes (a full disk): a trigger that raises, on either engine.
    const sql = store.database.sql();
    if (store.database.dialect === "postgres") {
      await sql.run("CREATE FUNCTION refuse_writes() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'disk full' USING ERRCODE = '53100'; END $$");
      await sql.run("CREATE TRIGGER refuse BEFORE INSERT ON writes FOR EACH ROW EXECUTE FUNCTION refuse_writes()");
    } else await sql.run("CREATE TRIGGER refuse BEFORE INSERT ON writes BEGIN SELECT RAISE(ABORT, 'disk full'); END");
    void bursts.add([renewal(2)]);
    void bursts.add([renewal(3)]);
    await end;
    expect(failures).toHaveLength(1);
    expect(String(failures[0])).toMatch(/disk full/);
    await sql.run("DROP TRIGGER refuse" + (store.database.dialect === "postgres" ? " ON writes" : ""));
    await bursts.add([renewal(4)]); // the queue has ended: nothing more is stored through it
    expect(await storedVersions()).toEqual([1]);
    // The next watch resumes from the last version stored: the server sends 2 and 3 again, and they are new to memory too.
    expect(await recorder.resumeVersion()).toBe("1");
    const next = new BurstQueue(recorder, stats, (error) => failures.push(error));
    await next.add([renewal(2), renewal(3), renewal(4)]);
    expect(await storedVersions()).toEqual([1, 2, 3, 4]);
    expect(failures).toHaveLength(1);
  });
});
