/** The recorder's pure core on both store engines: first list, events, duplicates, bookmarks, relist reconciliation. */
import { describe, expect, it } from "vitest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { namedObject, ProfileRecorder, readableEvent } from "@/lib/recorder/core";
import { storeEngines } from "../../helpers/store-engines";

const lease = (name: string, rv: string, renewTime: string) => ({
  apiVersion: "coordination.k8s.io/v1",
  kind: "Lease",
  metadata: { name, namespace: "ns", resourceVersion: rv },
  spec: { holderIdentity: name, renewTime },
});

describe.each(storeEngines())("the recorder's core on %s", (_name, engine) => {
  async function setup() {
    const store = await engine.writeStore();
    const recorder = new ProfileRecorder(
      store,
      "c1",
      DEFAULT_PROFILES.filter((p) => p.name === "lease"),
    );
    const writes = () => store.database.sql().all("SELECT o.name, w.rv, w.class, w.heartbeat FROM writes w JOIN objects o ON o.id = w.object_id ORDER BY w.id");
    return { store, recorder, writes };
  }

  describe("ProfileRecorder", () => {
    it("records nothing for the first list, then each new version once", async () => {
      const { recorder, writes } = await setup();
      expect(await recorder.applyList([lease("a", "1", "t1"), lease("b", "2", "t1")], "2", 1000)).toBe(0);
      expect(await recorder.resumeVersion()).toBe("2");
      expect(await recorder.applyEvent("MODIFIED", lease("a", "3", "t2"), 2000)).toBe(true);
      expect(await recorder.applyEvent("MODIFIED", lease("a", "3", "t2"), 2001)).toBe(false); // the same version again
      expect(await recorder.applyEvent("BOOKMARK", { metadata: { resourceVersion: "9" } }, 2002)).toBe(false);
      expect(await recorder.resumeVersion()).toBe("9");
      expect(await recorder.applyEvent("DELETED", lease("b", "10", "t1"), 3000)).toBe(true);
      expect(await writes()).toEqual([
        { name: "a", rv: "3", class: "unrouted", heartbeat: 1 },
        { name: "b", rv: "deleted@10", class: "delete", heartbeat: 0 },
      ]);
    });

    it("compares bursts handed together each against the one before, stores them in order, and skips an event its profile cannot read", async () => {
      const store = await engine.writeStore();
      const readable = DEFAULT_PROFILES.find((p) => p.name === "lease")!;
      // Hub copies (labelled) are read with a profile whose routed path does not parse: every such object fails.
      const unreadable = {
        ...readable,
        name: "unreadable",
        source: { path: "$", annotation: "x" },
        routed: { ready: { path: "$.status.conditions[?(@.type=='Ready'" } },
      };
      const recorder = new ProfileRecorder(store, "c1", [readable, unreadable]);
      await recorder.applyList([lease("a", "1", "t1")], "1", 1000);
      const hub = { ...lease("h", "4", "t1"), status: { conditions: [{ type: "Ready", status: "True" }] } };
      const skipped: string[] = [];
      const skip = (error: Error) => void skipped.push(error.message);
      const modified = (rv: string, renewTime: string, tsMs: number) => ({ type: "MODIFIED", obj: lease("a", rv, renewTime), tsMs });
      const bursts = [
        recorder.applyEvents([modified("2", "t2", 2000), modified("3", "t2", 2001)], skip),
        // Renewed at t2 again: a no-op against the burst before it, which is not stored yet when this one is compared.
        recorder.applyEvents(
          [
            { type: "ADDED", obj: { ...hub, metadata: { ...hub.metadata, labels: { "meta.datumapis.com/upstream-kind": "Lease" } } }, tsMs: 2002 },
            modified("5", "t2", 2003),
          ],
          skip,
        ),
        recorder.applyEvents([{ type: "DELETED", obj: lease("a", "6", "t2"), tsMs: 2004 }], skip),
      ];
      expect(await Promise.all(bursts)).toEqual([2, 1, 1]);
      expect(skipped).toHaveLength(1);
      expect(await store.database.sql().all("SELECT o.name, w.rv, w.class FROM writes w JOIN objects o ON o.id = w.object_id ORDER BY w.id")).toEqual([
        { name: "a", rv: "2", class: "unrouted" },
        { name: "a", rv: "3", class: "no-op" },
        { name: "a", rv: "5", class: "no-op" },
        { name: "a", rv: "deleted@6", class: "delete" },
      ]);
      expect(await recorder.resumeVersion()).toBe("6");
    });

    it("reconciles a relist: changed objects are written, missing ones deleted, unchanged ones left alone", async () => {
      const { recorder, writes } = await setup();
      await recorder.applyList([lease("a", "1", "t1"), lease("b", "2", "t1"), lease("c", "3", "t1")], "3", 1000);
      await recorder.applyList([lease("a", "1", "t1"), lease("b", "7", "t9"), lease("d", "8", "t1")], "8", 2000);
      expect(await writes()).toEqual([
        { name: "b", rv: "7", class: "unrouted", heartbeat: 1 },
        { name: "d", rv: "8", class: "create", heartbeat: 0 },
        { name: "c", rv: "deleted@8", class: "delete", heartbeat: 0 },
      ]);
    });

    it("remembers, across processes, until when it observed: where a gap starts when its resume point is gone", async () => {
      const { store, recorder } = await setup();
      expect(await recorder.observedUntilMs()).toBeUndefined();
      await recorder.applyList([lease("a", "1", "t1")], "1", 1000);
      expect(await recorder.observedUntilMs()).toBe(1000);
      await recorder.applyEvents([
        { type: "MODIFIED", obj: lease("a", "2", "t2"), tsMs: 2000 },
        { type: "BOOKMARK", obj: { metadata: { resourceVersion: "5" } }, tsMs: 2500 },
      ]);
      expect(await recorder.observedUntilMs()).toBe(2500);
      await recorder.markObserved(3000); // a clean stop
      const next = new ProfileRecorder(
        store,
        "c1",
        DEFAULT_PROFILES.filter((p) => p.name === "lease"),
      );
      expect(await next.observedUntilMs()).toBe(3000);
      expect(
        await new ProfileRecorder(
          store,
          "c2",
          DEFAULT_PROFILES.filter((p) => p.name === "lease"),
        ).observedUntilMs(),
      ).toBeUndefined();
    });
  });

  describe("odd objects from a cluster, or from a proxy that mangles the stream", () => {
    it("reads only named object changes and bookmarks with a resourceVersion", async () => {
      const named = { metadata: { name: "a", namespace: "n", resourceVersion: "5" } };
      expect(readableEvent("MODIFIED", named)).toBe(true);
      expect(readableEvent("BOOKMARK", { metadata: { resourceVersion: "9" } })).toBe(true);
      const unreadable: [string, unknown][] = [
        ["MODIFIED", null],
        ["ADDED", []],
        ["MODIFIED", { metadata: { namespace: "n", resourceVersion: "5" } }],
        ["MODIFIED", { metadata: { name: "", resourceVersion: "5" } }],
        ["MODIFIED", { metadata: { name: 7, resourceVersion: "5" } }],
        ["MODIFIED", { metadata: { name: "a", namespace: 3, resourceVersion: "5" } }],
        ["MODIFIED", { metadata: { name: "a" } }],
        ["BOOKMARK", { metadata: {} }],
        ["SOMETHING", named],
      ];
      for (const [type, obj] of unreadable) expect(readableEvent(type, obj), `${type} ${JSON.stringify(obj)}`).toBe(false);
      expect(namedObject({ metadata: { name: "a" } })).toBe(true);
      expect(namedObject({ metadata: { name: "" } })).toBe(false);
    });

    it("stores each version of an object whatever shape its fields take, and still reads what consumers route on", async () => {
      const store = await engine.writeStore();
      const recorder = new ProfileRecorder(
        store,
        "milo",
        DEFAULT_PROFILES.filter((p) => p.name === "connector-project"),
      );
      await recorder.applyList([], "1", 1000);
      const connector = (rv: number, extra: Record<string, unknown>, metadata: Record<string, unknown> = {}) => ({
        apiVersion: "networking.datumapis.com/v1alpha1",
        kind: "Connector",
        metadata: { name: "c", namespace: "p", resourceVersion: String(rv), ...metadata },
        ...extra,
      });
      const shapes = [
        connector(2, {}, { managedFields: [null, 5] }),
        connector(3, {}, { managedFields: "not a list" }),
        connector(4, {}, { managedFields: [{ manager: 5, time: 3, fieldsV1: 5 }] }),
        connector(5, { status: null }),
        connector(6, { spec: "x", status: { conditions: "x" } }),
        connector(7, { status: { conditions: [null, 5, "s", { type: "Ready", status: "True" }] } }),
        connector(8, { status: [1, 2] }, { annotations: "x" }),
      ];
      for (const [i, obj] of shapes.entries())
        expect(await recorder.applyEvent("MODIFIED", obj, 2000 + i), `version ${obj.metadata.resourceVersion}`).toBe(true);
      const stored = await store.database
        .sql()
        .all<{ rv: string; writer: string; projection: string }>("SELECT rv, writer, projection FROM writes ORDER BY id");
      expect(stored.map((w) => w.rv)).toEqual(["2", "3", "4", "5", "6", "7", "8"]);
      expect(stored.every((w) => w.writer === "unknown")).toBe(true);
      // A Ready condition among odd list items is still found.
      expect(stored.map((w) => JSON.parse(w.projection).online)).toEqual(["false", "false", "false", "false", "false", "true", "false"]);
    });
  });
});
