/**
 * Which FlowSchema takes a request, as the API server decides: by matchingPrecedence, then name; a rule needs a subject
 * naming the user (its name, a group, its service account) and a resource or non-resource rule covering the request.
 */
import { describe, expect, it } from "vitest";
import { flowSchemaOf, inMatchingOrder, matchFlowSchema, type FlowRequest } from "@/lib/churn/flow-schemas";

const schema = (name: string, precedence: number, level: string, rules: unknown[]) =>
  flowSchemaOf({
    apiVersion: "flowcontrol.apiserver.k8s.io/v1",
    kind: "FlowSchema",
    metadata: { name },
    spec: { matchingPrecedence: precedence, priorityLevelConfiguration: { name: level }, rules } as never,
  })!;

const everything = { verbs: ["*"], apiGroups: ["*"], resources: ["*"], clusterScope: true, namespaces: ["*"] };
const SCHEMAS = inMatchingOrder([
  schema("catch-all", 10000, "catch-all", [
    { subjects: [{ kind: "Group", group: { name: "*" } }], resourceRules: [everything], nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }] },
  ]),
  schema("exempt", 1, "exempt", [
    {
      subjects: [{ kind: "Group", group: { name: "system:masters" } }],
      resourceRules: [everything],
      nonResourceRules: [{ verbs: ["*"], nonResourceURLs: ["*"] }],
    },
  ]),
  schema("probes", 2, "exempt", [
    {
      subjects: [{ kind: "Group", group: { name: "system:authenticated" } }],
      nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/healthz", "/readyz", "/livez"] }],
    },
  ]),
  schema("unbounded-net-agents", 500, "agents", [
    { subjects: [{ kind: "Group", group: { name: "system:serviceaccounts:unbounded-net" } }], resourceRules: [everything] },
  ]),
  schema("leader-election", 200, "leader-election", [
    {
      subjects: [{ kind: "User", user: { name: "system:kube-scheduler" } }],
      resourceRules: [{ verbs: ["get", "create", "update"], apiGroups: ["coordination.k8s.io"], resources: ["leases"], namespaces: ["kube-system"] }],
    },
  ]),
  schema("a-node-agent", 500, "node-sa", [
    { subjects: [{ kind: "ServiceAccount", serviceAccount: { namespace: "unbounded-net", name: "node-7" } }], resourceRules: [everything] },
  ]),
  schema("service-accounts", 9000, "workload-low", [{ subjects: [{ kind: "Group", group: { name: "system:serviceaccounts" } }], resourceRules: [everything] }]),
  schema("debug", 8000, "global-default", [
    { subjects: [{ kind: "Group", group: { name: "system:authenticated" } }], nonResourceRules: [{ verbs: ["get"], nonResourceURLs: ["/debug/*"] }] },
  ]),
]);

const request = (r: Partial<FlowRequest>): FlowRequest => ({
  user: "u",
  groups: ["system:authenticated"],
  verb: "get",
  apiGroup: "",
  resource: "",
  subresource: "",
  namespace: "",
  path: "",
  ...r,
});
const agent = (name: string) => ({
  user: `system:serviceaccount:unbounded-net:${name}`,
  groups: ["system:serviceaccounts", "system:serviceaccounts:unbounded-net", "system:authenticated"],
});

describe("matchFlowSchema", () => {
  it("tries schemas by precedence, then name", () => {
    // node-7 is named by two schemas of precedence 500: a-node-agent comes first by name.
    expect(matchFlowSchema(SCHEMAS, request({ ...agent("node-7"), verb: "list", apiGroup: "net.unbounded-cloud.io", resource: "sites" }))?.name).toBe(
      "a-node-agent",
    );
    expect(matchFlowSchema(SCHEMAS, request({ ...agent("node-8"), verb: "list", apiGroup: "net.unbounded-cloud.io", resource: "sites" }))?.name).toBe(
      "unbounded-net-agents",
    );
    expect(
      matchFlowSchema(SCHEMAS, request({ groups: ["system:masters", "system:authenticated"], verb: "delete", resource: "pods", namespace: "x" }))?.name,
    ).toBe("exempt");
  });

  it("needs a namespace the rule names, or clusterScope for a request that names none", () => {
    const lease = { user: "system:kube-scheduler", verb: "update", apiGroup: "coordination.k8s.io", resource: "leases" };
    expect(matchFlowSchema(SCHEMAS, request({ ...lease, namespace: "kube-system" }))?.name).toBe("leader-election");
    expect(matchFlowSchema(SCHEMAS, request({ ...lease, namespace: "default" }))?.name).toBe("catch-all");
    // A verb the rule does not name: not leader election either.
    expect(matchFlowSchema(SCHEMAS, request({ ...lease, verb: "delete", namespace: "kube-system" }))?.name).toBe("catch-all");
  });

  it("matches non-resource paths exactly, or under a trailing /*, and only by non-resource rules", () => {
    expect(matchFlowSchema(SCHEMAS, request({ path: "/healthz" }))?.name).toBe("probes");
    expect(matchFlowSchema(SCHEMAS, request({ path: "/healthz/etcd" }))?.name).toBe("catch-all");
    expect(matchFlowSchema(SCHEMAS, request({ path: "/debug/pprof/heap" }))?.name).toBe("debug");
    expect(matchFlowSchema(SCHEMAS, request({ path: "/debug" }))?.name).toBe("catch-all");
    // A service account's non-resource request: its schema has resource rules only.
    expect(matchFlowSchema(SCHEMAS, request({ ...agent("node-8"), path: "/apis" }))?.name).toBe("catch-all");
  });

  it("reads FlowSchema objects, and none where the object is not one", () => {
    expect(SCHEMAS.map((s) => s.name)).toEqual([
      "exempt",
      "probes",
      "leader-election",
      "a-node-agent",
      "unbounded-net-agents",
      "debug",
      "service-accounts",
      "catch-all",
    ]);
    expect(flowSchemaOf({ metadata: { name: "x" } })).toBeNull();
    expect(matchFlowSchema([], request({ path: "/healthz" }))).toBeNull();
  });
});
