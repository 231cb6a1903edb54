/**
 * Writes whose result the audit log does not show: logged without bodies, answered with another kind than
 * the object's (a Scale, a binding's or an eviction's Status), or a create that is not a create verb. Each
 * scenario's expected classes are what its writes did, as the scenario writes them: a write after an
 * unseen change is never compared across it, so never a no-op it was not, nor a change it did not make.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { AuditIngester } from "@/lib/audit/ingest";
import { DEFAULT_PROFILES, type Profile } from "@/lib/churn/profiles";
import { WriteStore } from "@/lib/store/store";
import { auditEvent, httpRoute, type EventSpec } from "../../helpers/audit-log";

const START = Date.UTC(2026, 11, 1, 9, 0, 0);
const at = (s: number) => START + s * 1000;

const DEPLOYMENTS: Profile = {
  ...DEFAULT_PROFILES[0],
  name: "deployment",
  group: "apps",
  resource: "deployments",
  kind: "Deployment",
  source: { path: "$.spec" },
  routed: { replicas: { path: "$.replicas" } },
};
const PODS: Profile = { ...DEPLOYMENTS, name: "pod", group: "", resource: "pods", kind: "Pod", routed: { node: { path: "$.nodeName" } } };
// Replacing the shipped Deployment profile by name, as a configuration does: this one routes on the replica count.
const PROFILES = [...DEFAULT_PROFILES.filter((p) => p.name !== DEPLOYMENTS.name), DEPLOYMENTS, PODS];

function deployment(rv: number, replicas: number, observedGeneration: number) {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: "web", namespace: "apps", resourceVersion: String(rv) },
    spec: { replicas },
    status: { observedGeneration, replicas },
  };
}
const scale = (rv: number, replicas: number) => ({
  kind: "Scale",
  apiVersion: "autoscaling/v1",
  metadata: { name: "web", namespace: "apps", resourceVersion: String(rv) },
  spec: { replicas },
  status: { replicas: 2 },
});
const status201 = { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code: 201 };

const route = (seconds: number, spec: Partial<EventSpec>) =>
  JSON.stringify(
    auditEvent({ verb: "patch", group: "gateway.networking.k8s.io", resource: "httproutes", namespace: "apps", name: "web", receivedMs: at(seconds), ...spec }),
  );
const routeWrite = (seconds: number, rv: number, hostnames: string[]) => route(seconds, { responseObject: httpRoute("web", rv, hostnames, 1) });
/** Logged at Metadata level: no bodies (a policy's rule, or an event the API server truncated). */
const routeWriteUnseen = (seconds: number) => route(seconds, { level: "Metadata" });

async function setup(given?: WriteStore) {
  const store = given ?? (await WriteStore.open(join(mkdtempSync(join(tmpdir(), "churnscope-unseen-")), "s.sqlite")));
  const ingester = new AuditIngester(store, "prod", PROFILES);
  const feed = async (lines: string[]) => {
    lines.forEach((line, i) => ingester.line(line, i + 1, "test.log"));
    await ingester.flush();
  };
  /** Each object's writes in time order: verb, subresource and class. */
  const classes = async (name: string) =>
    (
      await store.database
        .sql()
        .all<{ verb: string; subresource: string; class: string }>(
          "SELECT w.verb, w.subresource, w.class FROM writes w JOIN objects o ON o.id = w.object_id WHERE o.name = ? ORDER BY w.ts_ms",
          [name],
        )
    ).map((w) => `${w.verb}${w.subresource ? `/${w.subresource}` : ""} ${w.class}`);
  return { store, ingester, feed, classes };
}

describe("writes whose result the log does not show", () => {
  it("a write after one logged without bodies is unknown, not a no-op, though it puts back what the unseen one changed", async () => {
    const { ingester, feed, classes } = await setup();
    // The truth: a.example → b.example (unseen) → a.example again: the third write changed the route back.
    await feed([routeWrite(0, 10, ["a.example"]), routeWriteUnseen(10), routeWrite(20, 12, ["a.example"]), routeWrite(30, 12, ["a.example"])]);
    expect(await classes("web")).toEqual(["patch unknown", "patch unknown", "patch unknown", "patch no-op"]);
    expect(ingester.counts).toMatchObject({ objectWrites: 4, noop: 1, unknown: 3 });
  });

  it("keeps the gap in the store: the next run does not compare across it either", async () => {
    const first = await setup();
    await first.feed([routeWrite(0, 10, ["a.example"]), routeWriteUnseen(10)]);
    const next = await setup(first.store);
    await next.feed([routeWrite(20, 12, ["a.example"])]);
    expect(await next.classes("web")).toEqual(["patch unknown", "patch unknown", "patch unknown"]);
  });

  it("a late batch carrying a write logged without bodies turns the write after it, compared before it came, into unknown", async () => {
    const { ingester, feed, classes } = await setup();
    await feed([routeWrite(0, 10, ["a.example"]), routeWrite(20, 12, ["a.example"])]);
    expect(await classes("web")).toEqual(["patch unknown", "patch no-op"]); // all that was known: nothing changed between them
    await ingester.newRun();
    await feed([routeWriteUnseen(10)]);
    expect(await classes("web")).toEqual(["patch unknown", "patch unknown", "patch unknown"]);
  });

  it("two writes in a row logged without bodies, then late versions: one between them changes nothing after the second, one after both is compared", async () => {
    const { ingester, feed, classes } = await setup();
    await feed([routeWrite(0, 10, ["a.example"]), routeWriteUnseen(10), routeWriteUnseen(20), routeWrite(30, 14, ["a.example"])]);
    expect(await classes("web")).toEqual(["patch unknown", "patch unknown", "patch unknown", "patch unknown"]);
    await ingester.newRun();
    await feed([routeWrite(15, 12, ["b.example"])]); // between the two unseen writes: the one at 20 still lies before 30
    expect(await classes("web")).toEqual(["patch unknown", "patch unknown", "patch unknown", "patch unknown", "patch unknown"]);
    await ingester.newRun();
    await feed([routeWrite(25, 13, ["a.example"])]); // after both, and the version before 30: 30 is compared with it
    expect(await classes("web")).toEqual(["patch unknown", "patch unknown", "patch unknown", "patch unknown", "patch unknown", "patch no-op"]);
  });

  it("a scale write answered with a Scale is not a version of the Deployment; a second one with the same resourceVersion changed nothing", async () => {
    const { feed, classes } = await setup();
    const write = (seconds: number, spec: Omit<EventSpec, "receivedMs" | "resource">) =>
      JSON.stringify(auditEvent({ group: "apps", resource: "deployments", namespace: "apps", name: "web", receivedMs: at(seconds), ...spec }));
    await feed([
      write(0, { verb: "create", code: 201, responseObject: deployment(1, 2, 0) }),
      write(10, { verb: "update", subresource: "status", responseObject: deployment(2, 2, 1) }), // only the status moved on
      write(20, { verb: "patch", subresource: "scale", responseObject: scale(3, 3) }), // replicas 2 → 3: the Deployment changed, unseen
      write(21, { verb: "patch", subresource: "scale", responseObject: scale(3, 3) }), // the same count again
      write(30, { verb: "update", subresource: "status", responseObject: deployment(4, 3, 2) }), // after the unseen change
      write(40, { verb: "update", subresource: "status", responseObject: deployment(4, 3, 2) }), // answered with the version it had
      write(50, { verb: "update", subresource: "status", responseObject: deployment(5, 3, 3) }), // only the status moved on
      write(60, { verb: "patch", responseObject: deployment(6, 4, 3) }), // replicas 3 → 4, seen
    ]);
    expect(await classes("web")).toEqual([
      "create create",
      "update/status unrouted",
      "patch/scale unknown",
      "patch/scale no-op",
      "update/status unknown",
      "update/status no-op",
      "update/status unrouted",
      "patch routed",
    ]);
  });

  it("binding and evicting a pod are writes to it, not creates; after them, its next write is not compared across them", async () => {
    const { feed, classes } = await setup();
    const pod = (rv: number, nodeName?: string) => ({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-1", namespace: "apps", resourceVersion: String(rv) },
      spec: { containers: [{ name: "web", image: "nginx" }], ...(nodeName ? { nodeName } : {}) },
    });
    const write = (seconds: number, spec: Omit<EventSpec, "receivedMs" | "resource">) =>
      JSON.stringify(auditEvent({ resource: "pods", namespace: "apps", name: "web-1", receivedMs: at(seconds), ...spec }));
    await feed([
      write(0, { verb: "create", code: 201, responseObject: pod(1) }),
      write(1, { verb: "create", subresource: "binding", code: 201, user: "system:kube-scheduler", responseObject: status201 }),
      write(2, { verb: "patch", subresource: "status", responseObject: pod(3, "node-a") }),
      write(9, { verb: "create", subresource: "eviction", code: 201, responseObject: status201 }),
      write(10, { verb: "delete", responseObject: pod(5, "node-a") }),
    ]);
    expect(await classes("web-1")).toEqual(["create create", "create/binding unknown", "patch/status unknown", "create/eviction unknown", "delete delete"]);
  });

  it("a server-side apply that the API server answers 201 Created is the object's create; applying it again changes nothing", async () => {
    const { ingester, feed, classes } = await setup();
    await feed([route(0, { code: 201, responseObject: httpRoute("web", 7, ["a.example"], 1) }), routeWrite(5, 7, ["a.example"])]);
    expect(await classes("web")).toEqual(["patch create", "patch no-op"]);
    expect(ingester.counts).toMatchObject({ objectWrites: 2, noop: 1, unknown: 0 });
  });
});
