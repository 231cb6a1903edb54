/**
 * Profiles: how to read one kind. The routed projection is the small set of values a
 * consumer acts on; ignored paths are dropped before diffing; unordered lists are compared as sets;
 * heartbeat paths are expected churn. Every path is JSONPath, evaluated by jsonpath-plus in its
 * safe mode (no JavaScript is run). A profile can read its projection from JSON inside an
 * annotation, falling back to a path when the annotation is absent or unparsable.
 */
// The schema lives apart so that pages linking to a profile's kind do not ship zod to the browser.
import { ALWAYS_IGNORED_PATHS as ALWAYS_IGNORED } from "./diff";
import { FLOW_SCHEMA } from "./flow-schemas";
import type { Profile } from "./profile-schema";

export type { Profile };

// NSO's connectorStatusLiveness: online = IsStatusConditionTrue(Ready); nodeId only while online. (NSO also requires
// connectionDetails.type == PublicKey for the id; every Connector has that type, the only one the CRD allows.)
const connectorOnline = {
  online: { path: "$.conditions[?(@.type==='Ready')].status", equals: "True" },
  nodeId: { path: "$.connectionDetails.publicKey.id", onlyWhen: { field: "online", equals: "true" } },
};

/** A workload: what its pods run is its pod template; a write that leaves it (replicas, status) changes nothing they run. */
const workload = (resource: string, kind: string): Profile => ({
  name: resource.slice(0, -1),
  group: "apps",
  version: "v1",
  resource,
  kind,
  clusters: [],
  description: `What the ${kind}'s pods run: its pod template. A template change (image, args, env, config references, service account) is recorded as a change; replicas and status are not.`,
  source: { path: "$.spec" },
  routed: { template: { path: "$.template" } },
  ignore: ALWAYS_IGNORED,
  unordered: [],
  heartbeat: [],
  changes: "template",
});

/** A GitOps tool's object: the revision it applied is the change. Watched only where the tool's CRD is served. */
const gitops = (name: string, group: string, version: string, resource: string, kind: string, revisionPath: string, tool: string): Profile => ({
  name,
  group,
  version,
  resource,
  kind,
  clusters: [],
  description: `${tool}: the revision it applied (${revisionPath.replace(/^\$/, "status")}) is recorded as a change.`,
  source: { path: "$.status" },
  routed: { revision: { path: revisionPath } },
  ignore: ALWAYS_IGNORED,
  unordered: [],
  heartbeat: [],
  changes: "revision",
});

/** An HTTPRoute: routed on its hostnames, rules and parents; its status compared as Linkerd's fixed policy controller does. */
const httpRoute = (name: string, group: string, version: string, api: string): Profile => ({
  name,
  group,
  version,
  resource: "httproutes",
  kind: "HTTPRoute",
  clusters: [],
  description: `${api} HTTPRoute. Routed: hostnames, rules, parentRefs. status.parents is compared without lastTransitionTime and without entry order (Linkerd's rule); a write that moved only those clocks is a no-op, counted as clock-only.`,
  source: { path: "$.spec" },
  routed: { hostnames: { path: "$.hostnames" }, rules: { path: "$.rules" }, parentRefs: { path: "$.parentRefs" } },
  ignore: [...ALWAYS_IGNORED, "$.status.parents[*].conditions[*].lastTransitionTime"],
  unordered: ["$.status.parents"],
  heartbeat: [],
});

/** Shipped: what changed around an onset (changes.ts). */
export const CHANGE_PROFILES: Profile[] = [
  workload("deployments", "Deployment"),
  workload("statefulsets", "StatefulSet"),
  workload("daemonsets", "DaemonSet"),
  gitops("flux-helmrelease", "helm.toolkit.fluxcd.io", "v2", "helmreleases", "HelmRelease", "$.lastAttemptedRevision", "Flux"),
  gitops("flux-kustomization", "kustomize.toolkit.fluxcd.io", "v1", "kustomizations", "Kustomization", "$.lastAppliedRevision", "Flux"),
  gitops("argocd-application", "argoproj.io", "v1alpha1", "applications", "Application", "$.sync.revision", "Argo CD"),
];

/** Shipped defaults. */
export const DEFAULT_PROFILES: Profile[] = [
  {
    name: "connector-project",
    group: "networking.datumapis.com",
    version: "v1alpha1",
    resource: "connectors",
    kind: "Connector",
    clusters: [],
    description: "Project-side Connector: the edge routes on Ready and the public key id (only while Ready).",
    source: { path: "$.status" },
    routed: connectorOnline,
    ignore: ALWAYS_IGNORED,
    unordered: [],
    heartbeat: [],
  },
  {
    name: "connector-hub",
    group: "networking.datumapis.com",
    version: "v1alpha1",
    resource: "connectors",
    kind: "Connector",
    clusters: [],
    description: "Hub copy: the edge parses the upstream-status annotation and falls back to .status, exactly like NSO's connectorLiveness.",
    source: { annotation: "networking.datumapis.com/upstream-status", path: "$.status" },
    routed: connectorOnline,
    ignore: ALWAYS_IGNORED,
    unordered: [],
    heartbeat: [],
  },
  httpRoute("httproute", "gateway.networking.k8s.io", "v1", "Gateway API"),
  // Linkerd's own HTTPRoute, whose status its policy controller writes (linkerd2 #12104: re-sent every 10 s before the fix).
  httpRoute("linkerd-httproute", "policy.linkerd.io", "v1beta3", "Linkerd"),
  {
    name: "lease",
    group: "coordination.k8s.io",
    version: "v1",
    resource: "leases",
    kind: "Lease",
    clusters: [],
    description: "Heartbeats: spec.renewTime is expected churn and is shown apart from other changes.",
    source: { path: "$.spec" },
    routed: { holder: { path: "$.holderIdentity" } },
    ignore: ALWAYS_IGNORED,
    unordered: [],
    heartbeat: ["spec.renewTime"],
  },
  {
    name: "gatewaypoolnode",
    group: "net.unbounded-cloud.io",
    version: "v1alpha1",
    resource: "gatewaypoolnodes",
    kind: "GatewayPoolNode",
    clusters: [],
    description: "status.lastUpdated is a heartbeat; spec and status.routes are what nodes act on.",
    source: { path: "$" },
    routed: { spec: { path: "$.spec" }, routes: { path: "$.status.routes" } },
    ignore: ALWAYS_IGNORED,
    unordered: [],
    heartbeat: ["status.lastUpdated"],
  },
  {
    name: "flowschema",
    ...FLOW_SCHEMA,
    clusters: [],
    description:
      "API Priority and Fairness: which requests a FlowSchema takes, and the priority level it sends them to. The API cost view counts each call with the FlowSchema that took it.",
    source: { path: "$.spec" },
    routed: { priorityLevel: { path: "$.priorityLevelConfiguration.name" }, precedence: { path: "$.matchingPrecedence" }, rules: { path: "$.rules" } },
    ignore: ALWAYS_IGNORED,
    unordered: [],
    heartbeat: [],
  },
  ...CHANGE_PROFILES,
];

/** The profile for an object: hub-side Connector copies carry the replicator's upstream labels. */
export function profileFor(profiles: Profile[], group: string, kind: string, cluster: string, labels?: Record<string, string>): Profile | undefined {
  const candidates = profiles.filter((p) => p.group === group && p.kind === kind && (p.clusters.length === 0 || p.clusters.includes(cluster)));
  if (candidates.length <= 1) return candidates[0];
  const hub = labels?.["meta.datumapis.com/upstream-kind"] !== undefined;
  return candidates.find((p) => (hub ? p.source.annotation !== undefined : p.source.annotation === undefined)) ?? candidates[0];
}
