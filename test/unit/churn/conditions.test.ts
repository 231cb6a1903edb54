import { describe, expect, it } from "vitest";
import { conditionClocks, traitsOf, traitsText } from "@/lib/churn/conditions";
import type { Json } from "@/lib/churn/json";

const CREATED = "2026-08-20T10:00:00Z";
/** A Connector as network-services-operator writes it: Accepted left at the CRD's default clock, Ready as given. */
const connector = (ready: { status: string; clock: string; message?: string }, extra: Record<string, Json> = {}): Json => ({
  metadata: { name: "c1", creationTimestamp: CREATED, resourceVersion: String(Math.random()), managedFields: [{ manager: "x", time: String(Math.random()) }] },
  status: {
    conditions: [
      { type: "Accepted", status: "True", reason: "Accepted", lastTransitionTime: "1970-01-01T00:00:00Z" },
      {
        type: "Ready",
        status: ready.status,
        reason: ready.status === "True" ? "ConnectorReady" : "ConnectorNotReady",
        message: ready.message ?? "",
        lastTransitionTime: ready.clock,
      },
    ],
    ...extra,
  },
});

describe("condition clocks", () => {
  it("finds a frozen clock: Ready flipped while its lastTransitionTime stayed", () => {
    const before = connector({ status: "True", clock: "2026-08-20T10:00:07Z" });
    const after = connector({ status: "False", clock: "2026-08-20T10:00:07Z", message: "Connector lease has expired. Agent may be offline." });
    expect(conditionClocks(before, after)).toEqual({ findings: [{ finding: "frozen", type: "Ready" }], clockOnly: false });
  });

  it("says a transition with its clock moved is one (not a fault), and a restamp is a clock moved with the status kept", () => {
    const before = connector({ status: "True", clock: "2026-08-20T10:00:07Z" });
    expect(conditionClocks(before, connector({ status: "False", clock: "2026-08-20T10:05:00Z" }))?.findings).toEqual([{ finding: "moved", type: "Ready" }]);
    expect(conditionClocks(before, connector({ status: "True", clock: "2026-08-20T10:05:00Z" }))).toEqual({
      findings: [{ finding: "restamped", type: "Ready" }],
      clockOnly: true,
    });
  });

  it("a restamp beside another change is not clock-only; a write that changed nothing of the conditions finds nothing", () => {
    const before = connector({ status: "True", clock: "2026-08-20T10:00:07Z" });
    const after = connector({ status: "True", clock: "2026-08-20T10:05:00Z" }, { leaseRef: { name: "c1" } });
    expect(conditionClocks(before, after)).toEqual({ findings: [{ finding: "restamped", type: "Ready" }], clockOnly: false });
    expect(conditionClocks(before, connector({ status: "True", clock: "2026-08-20T10:00:07Z" }, { leaseRef: { name: "c1" } }))).toBeUndefined();
  });

  it("finds a clock older than its object on a condition the write set (a create) or changed, not on one it left alone", () => {
    const created = conditionClocks(undefined, connector({ status: "False", clock: "2026-08-20T10:00:01Z" }));
    expect(created?.findings).toEqual([{ finding: "predates", type: "Accepted" }]);
    const before = connector({ status: "False", clock: "2026-08-20T10:00:01Z" });
    expect(conditionClocks(before, connector({ status: "True", clock: "2026-08-20T10:00:09Z" }))?.findings).toEqual([{ finding: "moved", type: "Ready" }]);
  });

  it("compares Gateway API route parents' conditions entry by entry, whatever their order", () => {
    const parent = (name: string, status: string, clock: string): Json => ({
      parentRef: { group: "policy.linkerd.io", kind: "Server", name },
      controllerName: "linkerd.io/policy-controller",
      conditions: [{ type: "Accepted", status, reason: "Accepted", message: "", lastTransitionTime: clock }],
    });
    const route = (...parents: Json[]): Json => ({ metadata: { creationTimestamp: "2026-12-07T09:30:41Z" }, status: { parents } });
    const before = route(parent("srv-1", "True", "2026-12-07T09:31:10Z"), parent("srv-2", "False", "2026-12-07T09:31:10Z"));
    // srv-2 flips with its clock frozen; srv-1 is restamped; the list comes back in the other order.
    const after = route(parent("srv-2", "True", "2026-12-07T09:31:10Z"), parent("srv-1", "True", "2026-12-07T09:31:20Z"));
    expect(conditionClocks(before, after)?.findings).toEqual([
      { finding: "frozen", type: "Accepted" },
      { finding: "restamped", type: "Accepted" },
    ]);
  });

  it("keeps a fixed-size summary, and reads back what it stored (and nothing from what it cannot read)", () => {
    const many = (clock: string): Json => ({
      metadata: { creationTimestamp: CREATED },
      status: { conditions: Array.from({ length: 40 }, (_, i) => ({ type: `T${i}`, status: "True", lastTransitionTime: clock })) },
    });
    const found = conditionClocks(many("2026-08-20T11:00:00Z"), many("2026-08-20T12:00:00Z"))!;
    expect(found.findings).toHaveLength(8);
    expect(found.clockOnly).toBe(true);
    const text = traitsText({ echo: true, clocks: found })!;
    expect(traitsOf(text)).toEqual({ echo: true, clocks: found });
    expect(traitsOf("not json")).toEqual({});
    expect(traitsOf('{"e":1}')).toEqual({});
    expect(traitsText({})).toBeNull();
  });

  it("finds nothing in an object without conditions, or with a list that is not conditions", () => {
    expect(conditionClocks({ spec: {} }, { spec: { replicas: 2 } })).toBeUndefined();
    expect(conditionClocks({ status: { conditions: ["a"] } }, { status: { conditions: ["b"] } })).toBeUndefined();
  });
});
