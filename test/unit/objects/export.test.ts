/**
 * Exporting recorded writes as a snapshot's object writes and importing them again gives back
 * every write with the same class, changes and projection: the recorder's core records, the
 * exporter rebuilds each version, the importer re-analyses them.
 */
import { describe, expect, it } from "vitest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { exportObjectWrites } from "@/lib/objects/export";
import { ProfileRecorder } from "@/lib/recorder/core";
import { importObjectWrites } from "@/lib/store/import-writes";
import type { WriteStore } from "@/lib/store/store";
import { storeEngines } from "../../helpers/store-engines";

const profile = DEFAULT_PROFILES.find((p) => p.name === "connector-project")!;

function connector(name: string, rv: number, ready: "True" | "False", message: string) {
  return {
    apiVersion: "networking.datumapis.com/v1alpha1",
    kind: "Connector",
    metadata: { name, namespace: "demos", resourceVersion: String(rv), uid: `uid-${name}` },
    spec: { connectionClassName: "datum-connect" },
    status: {
      conditions: [
        { type: "Ready", status: ready, reason: ready === "True" ? "LeaseHeld" : "LeaseExpired", message, lastTransitionTime: "2026-09-11T13:00:00Z" },
      ],
    },
  };
}

describe.each(storeEngines())("exported object writes on %s", (_name, engine) => {
  const newStore = () => engine.writeStore();
  it("rebuild every version: the range's first state, updates, a create and a delete re-import as recorded", async () => {
    const live = await newStore();
    const recorder = new ProfileRecorder(live, "milo", [profile]);
    await recorder.applyList([connector("a", 1, "False", "not renewed yet"), connector("b", 2, "True", "ok")], "2", 1_000);
    await recorder.applyEvent("MODIFIED", connector("a", 3, "False", "expired"), 2_000); // before the range
    await recorder.applyEvent("MODIFIED", connector("a", 4, "False", "not renewed yet"), 11_000);
    await recorder.applyEvent("MODIFIED", connector("a", 5, "True", "ok"), 12_000);
    await recorder.applyEvent("ADDED", connector("c", 6, "False", "new"), 13_000);
    await recorder.applyEvent("MODIFIED", connector("c", 7, "False", "still new"), 14_000);
    await recorder.applyEvent("DELETED", connector("b", 8, "True", "ok"), 15_000);

    const { writes, leftOut } = await exportObjectWrites(live, { startMs: 10_000, endMs: 20_000 });
    expect(leftOut).toBe(0);
    expect(writes!.writes.map((w) => [w.t, w.cls])).toEqual([
      [11_000, "unrouted"],
      [12_000, "routed"],
      [13_000, "create"],
      [14_000, "unrouted"],
      [15_000, "delete"],
    ]);
    // a's state at the start of the range includes the write before it.
    const a = writes!.objects.findIndex((o) => o.name === "a");
    expect((writes!.objects[a].initial as ReturnType<typeof connector>).status.conditions[0].message).toBe("expired");
    expect(writes!.objects.find((o) => o.name === "c")!.initial).toBeNull();

    const frozen = await newStore();
    await importObjectWrites(frozen, writes!, DEFAULT_PROFILES);
    for (const name of ["a", "b", "c"]) {
      const key = { cluster: "milo", group: "networking.datumapis.com", kind: "Connector", namespace: "demos", name };
      const strip = (ws: Awaited<ReturnType<WriteStore["writesOf"]>>) =>
        ws.map(({ cls, changes, projection, heartbeat, tsMs }) => ({ cls, changes, projection, heartbeat, tsMs }));
      expect(strip(await frozen.writesOf(key, 10_000, 20_000, 100)), name).toEqual(strip(await live.writesOf(key, 10_000, 20_000, 100)));
      expect(await frozen.projectionBefore(key, 10_000), name).toEqual(await live.projectionBefore(key, 10_000));
    }
  });

  it("leave out objects whose first version was never kept, and say how many", async () => {
    const old = await newStore();
    const key = { cluster: "milo", group: "networking.datumapis.com", kind: "Connector", namespace: "demos", name: "legacy" };
    await old.record(key, {
      tsMs: 11_000,
      cls: "unrouted",
      writer: "x",
      source: "watch",
      heartbeat: false,
      changes: [{ path: "status.message", before: "a", after: "b" }],
      projection: {},
    });
    const { writes, leftOut } = await exportObjectWrites(old, { startMs: 10_000, endMs: 20_000 });
    expect(leftOut).toBe(1);
    expect(writes!.objects).toEqual([]);
  });
});
