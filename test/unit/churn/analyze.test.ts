/** The recorder's core on real-shaped objects: projection, normalisation, classification, attribution. */
import { beforeAll, describe, expect, it } from "vitest";
import { analyze, attribute, normalise, project } from "@/lib/churn/analyze";
import { diffObjects } from "@/lib/churn/diff";
import type { Json } from "@/lib/churn/json";
import { DEFAULT_PROFILES, profileFor, type Profile } from "@/lib/churn/profiles";
import { generateReplay, type Replay } from "@/lib/demo/replay";
import { DEFAULT_REPLAY } from "@/lib/demo/params";
import { setPath, fieldsV1Keys, ownsPath, parsePath } from "@/lib/churn/paths";

const profile = (name: string): Profile => DEFAULT_PROFILES.find((p) => p.name === name)!;
const ready = (status: string, message: string) => ({
  type: "Ready",
  status,
  reason: status === "True" ? "ConnectorReady" : "ConnectorNotReady",
  message,
  lastTransitionTime: "2026-09-11T18:11:57Z",
});
const connector = (
  readyStatus: string,
  message: string,
  addresses = [
    { address: "192.0.2.1", port: 1 },
    { address: "10.0.0.1", port: 2 },
  ],
) => ({
  apiVersion: "networking.datumapis.com/v1alpha1",
  kind: "Connector",
  metadata: { name: "c", namespace: "ns", resourceVersion: "1" },
  status: { conditions: [ready(readyStatus, message)], connectionDetails: { type: "PublicKey", publicKey: { id: "abc", addresses } } },
});

describe("project", () => {
  it("reads the edge's view: online from Ready, nodeId only while online", () => {
    expect(project(profile("connector-project"), connector("True", "ok"))).toEqual({ online: "true", nodeId: "abc" });
    expect(project(profile("connector-project"), connector("False", "expired"))).toEqual({ online: "false", nodeId: "" });
  });

  it("reads the hub copy's annotation, and falls back to .status when it is missing or unparsable, as the edge does", () => {
    const hub = profile("connector-hub");
    const copy = (annotation: string | undefined): Json => ({
      metadata: { annotations: annotation === undefined ? {} : { "networking.datumapis.com/upstream-status": annotation } },
      status: { conditions: [ready("False", "x")] },
    });
    expect(project(hub, copy(JSON.stringify(connector("True", "ok").status)))).toEqual({ online: "true", nodeId: "abc" });
    expect(project(hub, copy(undefined))).toEqual({ online: "false", nodeId: "" });
    expect(project(hub, copy("{not json"))).toEqual({ online: "false", nodeId: "" });
  });
});

describe("analyze", () => {
  it("calls a Ready message rewrite unrouted and names the field; a Ready flip is routed", () => {
    const p = profile("connector-project");
    const rewrite = analyze(p, connector("False", "expired"), connector("False", "not renewed yet"));
    expect(rewrite.cls).toBe("unrouted");
    expect(rewrite.changes).toEqual([{ path: "status.conditions[type=Ready].message", before: "expired", after: "not renewed yet" }]);
    expect(analyze(p, connector("False", "expired"), connector("True", "ok")).cls).toBe("routed");
  });

  it("reports a reordered address list as a change the edge does not route on", () => {
    const a = connector("True", "ok");
    const b = connector("True", "ok", [
      { address: "10.0.0.1", port: 2 },
      { address: "192.0.2.1", port: 1 },
    ]);
    const result = analyze(profile("connector-project"), a, b);
    expect(result.cls).toBe("unrouted");
    expect(result.changes.map((c) => c.path)).toEqual(["status.connectionDetails.publicKey.addresses"]);
  });

  it("ignores HTTPRoute status.parents lastTransitionTime and entry order (Linkerd's rule); spec changes are routed", () => {
    const parent = (name: string, ltt: string) => ({
      parentRef: { name },
      controllerName: "linkerd.io/policy-controller",
      conditions: [{ type: "Accepted", status: "True", lastTransitionTime: ltt }],
    });
    const route = (parents: Json[], hostnames = ["a.example"]) => ({ metadata: { name: "r", resourceVersion: "1" }, spec: { hostnames }, status: { parents } });
    const p = profile("httproute");
    const restamped = analyze(p, route([parent("x", "t1"), parent("y", "t1")]), route([parent("y", "t2"), parent("x", "t2")]));
    // A new version that differs only in ignored paths changed nothing the profile reads, as an audit log with bodies says too.
    expect(restamped).toMatchObject({ cls: "no-op", changes: [] });
    const relabelled = analyze(p, route([parent("x", "t1")]), {
      ...route([parent("x", "t2")]),
      metadata: { name: "r", resourceVersion: "2", labels: { a: "b" } },
    });
    expect(relabelled).toMatchObject({ cls: "unrouted", changes: [{ path: "metadata.labels" }] });
    // Ignoring the only annotation leaves no annotations: adding it changes nothing the profile reads.
    const heartbeat = { ...p, ignore: [...p.ignore, "$.metadata.annotations.heartbeat"] };
    const annotated = { ...route([]), metadata: { name: "r", resourceVersion: "2", annotations: { heartbeat: "1" } } };
    expect(analyze(heartbeat, route([]), annotated)).toMatchObject({ cls: "no-op", changes: [] });
    expect(analyze(p, route([]), route([], ["b.example"])).cls).toBe("routed");
  });

  it("marks a Lease renewal as heartbeat", () => {
    const lease = (t: string) => ({ metadata: { resourceVersion: t }, spec: { holderIdentity: "c", renewTime: t } });
    expect(analyze(profile("lease"), lease("1"), lease("2"))).toMatchObject({ cls: "unrouted", heartbeat: true });
  });

  it("classifies creates and deletes", () => {
    expect(analyze(profile("lease"), undefined, { spec: {} }).cls).toBe("create");
    expect(analyze(profile("lease"), { spec: {} }, undefined).cls).toBe("delete");
  });
});

describe("normalise", () => {
  it("drops plain ignored paths, nested or overlapping, without touching the object or its key order", () => {
    const base = DEFAULT_PROFILES[0];
    const of = (ignore: string[]): Profile => ({ ...base, ignore, unordered: [] });
    const obj = {
      kind: "X",
      metadata: { name: "n", resourceVersion: "7", managedFields: [{ manager: "m" }], labels: { a: "1" } },
      status: { a: { b: 1, c: 2 }, d: 3 },
    };
    const before = JSON.stringify(obj);
    const ignored = of(["$.metadata.resourceVersion", "$.metadata.managedFields", "$.status.a.b", "$.missing.path"]);
    expect(normalise(ignored, obj)).toEqual({ kind: "X", metadata: { name: "n", labels: { a: "1" } }, status: { a: { c: 2 }, d: 3 } });
    expect(Object.keys(normalise(ignored, obj) as object)).toEqual(["kind", "metadata", "status"]);
    // A path inside an ignored one, in either order, leaves the outer one ignored.
    for (const paths of [
      ["$.metadata", "$.metadata.name"],
      ["$.metadata.name", "$.metadata"],
    ])
      expect(normalise(of(paths), obj)).toEqual({ kind: "X", status: obj.status });
    expect(normalise(of(["$.nothing"]), obj)).toBe(obj); // nothing to drop: the object itself
    expect(JSON.stringify(obj)).toBe(before);
  });
});

describe("paths", () => {
  it("parse, set and map onto fieldsV1 keys", () => {
    expect(parsePath('metadata.annotations["a/b"]')).toEqual([{ key: "metadata" }, { key: "annotations" }, { key: "a/b" }]);
    expect(fieldsV1Keys("status.conditions[type=Ready].message")).toEqual(["f:status", "f:conditions", 'k:{"type":"Ready"}', "f:message"]);
    const obj = { status: { conditions: [{ type: "Ready", message: "a" }] } } as Json;
    setPath(obj, "status.conditions[type=Ready].message", "b");
    setPath(obj, "status.conditions[type=Other].status", "True");
    setPath(obj, 'metadata.annotations["x/y"]', "1");
    expect(obj).toEqual({
      status: {
        conditions: [
          { type: "Ready", message: "b" },
          { type: "Other", status: "True" },
        ],
      },
      metadata: { annotations: { "x/y": "1" } },
    });
    expect(ownsPath({ "f:status": { "f:conditions": { 'k:{"type":"Ready"}': {} } } }, "status.conditions[type=Ready].message")).toBe(true);
    expect(ownsPath({ "f:status": { "f:leaseRef": {} } }, "status.conditions[type=Ready].message")).toBe(false);
  });
});

describe("attribution on the replay's real-shaped versions", () => {
  let replay: Replay;
  beforeAll(() => {
    replay = generateReplay({ ...DEFAULT_REPLAY, startMs: Date.parse("2026-09-11T12:00:00Z"), endMs: Date.parse("2026-09-11T16:00:00Z") });
  }, 60_000);

  it("names the manager that wrote each change, from managedFields alone", () => {
    const current = replay.sink.initial.map((o) => (o === null ? undefined : (o as Json)));
    let checked = 0;
    for (const w of replay.sink.writes) {
      const before = current[w.objectIndex];
      const after = w.object === null ? undefined : (w.object as Json);
      current[w.objectIndex] = after;
      if (w.cls === "create" || w.cls === "delete" || w.cause === "deletion-requested") continue;
      const ref = replay.sink.objects[w.objectIndex];
      const p = profileFor(DEFAULT_PROFILES, ref.group, ref.kind, ref.cluster, (after as { metadata?: { labels?: Record<string, string> } }).metadata?.labels)!;
      expect(attribute(before, after, diffObjects(before, after)), `${w.cause} on ${ref.kind} ${ref.name}`).toBe(w.manager);
      expect(analyze(p, before, after).cls, `${w.cause} on ${ref.kind} ${ref.name}`).toBe(w.cls);
      checked++;
    }
    expect(checked).toBeGreaterThan(5_000);
  });
});
