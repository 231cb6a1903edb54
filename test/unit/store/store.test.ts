/** The object-write store on real SQLite: ranking, filters, pagination, field churn, one object's writes. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WriteStore, type ObjectKey, type StoredWrite } from "@/lib/store/store";

const key = (name: string, kind = "Connector"): ObjectKey => ({ cluster: "milo", group: kind === "Lease" ? "coordination.k8s.io" : "networking.datumapis.com", kind, namespace: "ns", name });
const write = (tsMs: number, cls: StoredWrite["cls"], writer: string, paths: string[], projection = { online: "false" }): StoredWrite => ({
  tsMs,
  cls,
  writer,
  source: "replay",
  heartbeat: false,
  changes: paths.map((path) => ({ path, before: 1, after: 2 })),
  projection,
});

function fixture(): WriteStore {
  const store = new WriteStore(join(mkdtempSync(join(tmpdir(), "churnscope-store-")), "t.sqlite"));
  store.batch(() => {
    for (let i = 1; i <= 30; i++) store.record(key("busy"), write(i * 1000, "unrouted", "operator", ["status.message"]));
    store.record(key("busy"), write(31_000, "routed", "operator", ["status.ready"], { online: "true" }));
    for (let i = 1; i <= 5; i++) store.record(key("quiet"), write(i * 1000, "unrouted", "agent", ["status.addresses"]));
    store.record(key("lease", "Lease"), write(2000, "create", "operator", []));
    store.record(key("busy"), write(99_000, "unrouted", "operator", ["status.message"]));
  });
  return store;
}

describe("WriteStore", () => {
  it("ranks objects by writes in (from, to] with class counts, wasted ratio, top fields, writers and a sparkline", () => {
    const { total, rows } = fixture().objects({ fromMs: 0, toMs: 50_000 }, 10, 0);
    expect(total).toBe(3);
    expect(rows.map((r) => r.name)).toEqual(["busy", "quiet", "lease"]);
    expect(rows[0]).toMatchObject({ writes: 31, routed: 1, unrouted: 30, create: 0, topFields: [{ path: "status.message", changes: 30 }, { path: "status.ready", changes: 1 }], writers: [{ writer: "operator", writes: 31 }] });
    expect(rows[0].wastedRatio).toBeCloseTo(30 / 31, 12);
    expect(rows[0].sparkline.reduce((a, b) => a + b, 0)).toBe(31);
    expect(rows[0].sparkline.length).toBe(40);
  });

  it("filters by kind and class, and pages", () => {
    const store = fixture();
    expect(store.objects({ fromMs: 0, toMs: 50_000, kind: "Lease" }, 10, 0).rows.map((r) => r.name)).toEqual(["lease"]);
    expect(store.objects({ fromMs: 0, toMs: 50_000, cls: "routed" }, 10, 0).rows.map((r) => r.name)).toEqual(["busy"]);
    const page2 = store.objects({ fromMs: 0, toMs: 50_000 }, 2, 2);
    expect(page2).toMatchObject({ total: 3, rows: [{ name: "lease" }] });
    expect(store.kinds()).toEqual([
      { cluster: "milo", group: "coordination.k8s.io", kind: "Lease" },
      { cluster: "milo", group: "networking.datumapis.com", kind: "Connector" },
    ]);
  });

  it("ranks changed fields across objects with their writers", () => {
    expect(fixture().fields({ fromMs: 0, toMs: 50_000 }, 10)).toEqual([
      { path: "status.message", changes: 30, objects: 1, writers: [{ writer: "operator", changes: 30 }] },
      { path: "status.addresses", changes: 5, objects: 1, writers: [{ writer: "agent", changes: 5 }] },
      { path: "status.ready", changes: 1, objects: 1, writers: [{ writer: "operator", changes: 1 }] },
    ]);
  });

  it("returns one object's writes in order and the projection in force before a range", () => {
    const store = fixture();
    const writes = store.writesOf(key("busy"), 29_000, 40_000, 100);
    expect(writes.map((w) => [w.tsMs, w.cls])).toEqual([[30_000, "unrouted"], [31_000, "routed"]]);
    expect(writes[1].changes).toEqual([{ path: "status.ready", before: 1, after: 2 }]);
    expect(store.projectionBefore(key("busy"), 50_000)).toEqual({ online: "true" });
    expect(store.projectionBefore(key("busy"), 500)).toBeUndefined();
    expect(store.writesOf(key("missing"), 0, 1e9, 10)).toEqual([]);
  });
});
