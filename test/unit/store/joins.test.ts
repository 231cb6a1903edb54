/**
 * One write, one row, on both engines, when the recorder and audit ingest store the same write at the same time (two
 * replicas on one PostgreSQL database do: one records the cluster, the other ingests the webhook's batches).
 */
import { describe, expect, it } from "vitest";
import type { ObjectKey, StoredWrite } from "@/lib/wire/objects";
import { storeEngines } from "../../helpers/store-engines";

const key: ObjectKey = { cluster: "milo", group: "networking.datumapis.com", kind: "Connector", namespace: "ns", name: "c1" };
const write = (source: "watch" | "audit", resourceVersion: string, tsMs: number): StoredWrite => ({
  tsMs,
  cls: "unrouted",
  writer: "operator",
  source,
  heartbeat: false,
  changes: [{ path: "status.message", before: "a", after: "b" }],
  projection: { online: "true" },
  resourceVersion,
  ...(source === "audit" ? { request: { verb: "patch", subresource: "status", userAgent: "operator/v1", code: 200, latencyMs: 3 } } : {}),
});

describe.each(storeEngines())("one row per write on %s", (_name, engine) => {
  it.each([
    ["the recorder's transaction", "watch", "audit"],
    ["audit ingest's transaction", "audit", "watch"],
  ] as const)(
    "a write stored by both sources while %s is still open is one row, with the recorder's diff and the audit's request",
    async (_first, first, second) => {
      const store = await engine.writeStore();
      // An audit log is already being ingested and the day's writes stored: the recorder looks for audited writes.
      const earlier = { tsMs: 1_000, user: "operator", userAgent: "operator/v1", verb: "patch", group: key.group, resource: "connectors" };
      await store.batch(async () => {
        await store
          .audit()
          .addRequest(key.cluster, { ...earlier, key: "r-1", subresource: "status", namespace: "ns", name: "c0", code: 200, latencyMs: 3 }, false);
        await store.record({ ...key, name: "c0" }, write("watch", "100", 1_000));
      });
      let recorded!: () => void;
      const firstRecorded = new Promise<void>((resolve) => (recorded = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      // The first source's transaction stays open after its write; the second starts meanwhile, as another replica's would.
      const firstDone = store.batch(async () => {
        await store.record(key, write(first, "384", 10_000), first === "audit" ? { requestKey: "r-384" } : {});
        recorded();
        await released;
      });
      await firstRecorded;
      const secondDone = store.batch(() => store.record(key, write(second, "384", 10_400), second === "audit" ? { requestKey: "r-384" } : {}));
      setTimeout(release, 300);
      await Promise.all([firstDone, secondDone]);

      const rows = await store.database
        .sql()
        .all<{ rv: string; source: string; verb: string | null }>("SELECT rv, source, verb FROM writes WHERE rv = '384' ORDER BY id");
      expect(rows).toEqual([{ rv: "384", source: "watch", verb: "patch" }]);
    },
  );
});
