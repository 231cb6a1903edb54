import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { childPath, diffObjects } from "@/lib/churn/diff";
import { cloneJson, jsonEqual, sortedJson, type Json } from "@/lib/churn/json";
import { ROOT } from "../../helpers/root";

const ready = (status: string, message: string, ltt = "2026-09-11T18:11:57Z") => ({
  type: "Ready",
  status,
  reason: "ConnectorNotReady",
  message,
  lastTransitionTime: ltt,
});

describe("diffObjects", () => {
  it("names a changed condition field by the condition's type", () => {
    const before = { status: { conditions: [{ type: "Accepted", status: "True" }, ready("False", "expired")] } };
    const after = { status: { conditions: [{ type: "Accepted", status: "True" }, ready("False", "not renewed yet")] } };
    expect(diffObjects(before, after)).toEqual([{ path: "status.conditions[type=Ready].message", before: "expired", after: "not renewed yet" }]);
  });

  it("matches list-map items by key, so reordering conditions alone is no change", () => {
    const a = {
      conditions: [
        { type: "A", status: "True" },
        { type: "B", status: "False" },
      ],
    };
    const b = {
      conditions: [
        { type: "B", status: "False" },
        { type: "A", status: "True" },
      ],
    };
    expect(diffObjects(a, b)).toEqual([]);
  });

  it("reports a reordered atomic list (addresses) as one change of the whole list", () => {
    const x = { address: "192.0.2.1", port: 1 };
    const y = { address: "10.0.0.1", port: 2 };
    expect(diffObjects({ addresses: [x, y] }, { addresses: [y, x] })).toEqual([{ path: "addresses", before: [x, y], after: [y, x] }]);
  });

  it("reports added and removed fields without the missing side", () => {
    expect(diffObjects({ spec: { renewTime: "t1" } }, { spec: { acquireTime: "t2" } })).toEqual([
      { path: "spec.renewTime", before: "t1" },
      { path: "spec.acquireTime", after: "t2" },
    ]);
  });

  it("quotes keys that are not plain identifiers and skips ignored paths", () => {
    const before = { metadata: { resourceVersion: "1", annotations: { "networking.datumapis.com/upstream-status": "{}" } } };
    const after = { metadata: { resourceVersion: "2", annotations: { "networking.datumapis.com/upstream-status": '{"a":1}' } } };
    expect(diffObjects(before, after)).toEqual([{ path: 'metadata.annotations["networking.datumapis.com/upstream-status"]', before: "{}", after: '{"a":1}' }]);
    expect(childPath("", "a/b")).toBe('["a/b"]');
  });

  it("treats a whole object appearing or vanishing as one change at the root", () => {
    expect(diffObjects(undefined, { a: 1 })).toEqual([{ path: "", after: { a: 1 } }]);
  });
});

describe("sortedJson", () => {
  it("sorts keys at every level like Go's json.Marshal of a map, keeping list order", () => {
    expect(sortedJson({ b: 1, a: { d: [3, { z: 1, y: 2 }], c: null } })).toBe('{"a":{"c":null,"d":[3,{"y":2,"z":1}]},"b":1}');
    expect(jsonEqual({ a: 1, b: 2 }, { b: 2, a: 1 })).toBe(true);
    expect(jsonEqual([1, 2], [2, 1])).toBe(false);
  });

  it("jsonEqual says what comparing sortedJson says, on values of every shape", () => {
    const values: Json[] = [
      null,
      0,
      1,
      "1",
      true,
      false,
      [],
      {},
      [1],
      [[1]],
      { a: null },
      { a: 1 },
      { a: "1" },
      { a: 1, b: 2 },
      { b: 2, a: 1 },
      { a: [1, { c: 2, d: 3 }] },
      { a: [1, { d: 3, c: 2 }] },
      { a: [{ d: 3, c: 2 }, 1] },
      { a: {} },
      { b: null },
    ];
    for (const x of values)
      for (const y of values) expect(jsonEqual(x, y), `${JSON.stringify(x)} vs ${JSON.stringify(y)}`).toBe(sortedJson(x) === sortedJson(y));
    expect(jsonEqual(undefined, undefined)).toBe(true);
    expect(jsonEqual(undefined, null)).toBe(false);
  });
});

describe("cloneJson", () => {
  // Every object and list of a value, in walk order.
  const nodes = (value: unknown, out: object[] = []): object[] => {
    if (typeof value === "object" && value !== null) {
      out.push(value);
      for (const item of Object.values(value)) nodes(item, out);
    }
    return out;
  };

  it("copies what structuredClone copies, in the same key order, sharing no object or list", () => {
    // Real API server events (kube-apiserver's own audit log) and values of every shape.
    const log = gunzipSync(readFileSync(join(ROOT, "test", "fixtures", "audit-logs", "kube-apiserver", "audit.log.gz"))).toString("utf8");
    const events = log
      .split("\n")
      .filter((line) => line.trim() !== "")
      .slice(0, 50)
      .map((line) => JSON.parse(line) as Json);
    const values: Json[] = [...events, null, 0, -0, "", [], {}, [[[]]], { a: [1, { b: [null, { c: "d" }] }], e: {} }];
    expect(events.length).toBeGreaterThan(10);
    for (const value of values) {
      const copy = cloneJson(value);
      expect(copy).toStrictEqual(structuredClone(value));
      expect(JSON.stringify(copy)).toBe(JSON.stringify(value));
      const before = nodes(value);
      const after = nodes(copy);
      expect(after.length).toBe(before.length);
      for (const node of after) expect(before.includes(node)).toBe(false);
    }
    expect(Object.is(cloneJson(-0), -0)).toBe(true);
  });

  it("keeps a parsed __proto__ key as the copy's own key, and undefined values as structuredClone does", () => {
    const parsed = JSON.parse('{"metadata":{"__proto__":{"polluted":true},"name":"x"}}') as { [key: string]: Json };
    const copy = cloneJson(parsed) as { metadata: { [key: string]: Json } };
    expect(Object.getPrototypeOf(copy.metadata)).toBe(Object.prototype);
    expect(Object.keys(copy.metadata)).toEqual(["__proto__", "name"]);
    expect(JSON.stringify(copy)).toBe(JSON.stringify(parsed));
    expect((copy.metadata as { polluted?: boolean }).polluted).toBeUndefined();
    const withUndefined = { a: undefined, b: [undefined] } as unknown as Json;
    expect(cloneJson(withUndefined)).toStrictEqual(structuredClone(withUndefined));
  });
});
