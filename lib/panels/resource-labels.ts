/**
 * How each Kubernetes version names a resource in its storage metrics' labels, chosen by what the scrape
 * holds (probe.ts), never by a version number: group and resource apart (1.34+); one label joining them
 * with a dot (up to 1.33: `leases.coordination.k8s.io`, core resources bare: `pods`); or, in etcd's
 * request counters up to 1.25, the stored Go type (`*coordination.Lease`, `*core.Pod`), where every
 * custom resource is `*unstructured.Unstructured` and cannot be told from another.
 */
import { escapeRegex, literalAlternation, type Matcher } from "../promql/promql";
import { m, type PanelVars } from "./queries";

/** `resource` in a label that joins it to its group with a dot; any group's when none is chosen. */
export function dottedResource(label: string, resource: string | undefined, group: string | undefined): Matcher | undefined {
  if (resource === undefined) return undefined;
  if (group === undefined) return m(label, "=~", `${literalAlternation([resource])}(\\..+)?`);
  return m(label, "=", group ? `${resource}.${group}` : resource);
}

/** The API groups the API server stores as Go types of its own; any other group is a custom resource. */
const BUILT_IN_GROUPS = new Set([
  "",
  "admissionregistration.k8s.io",
  "apiextensions.k8s.io",
  "apiregistration.k8s.io",
  "apps",
  "autoscaling",
  "batch",
  "certificates.k8s.io",
  "coordination.k8s.io",
  "discovery.k8s.io",
  "events.k8s.io",
  "extensions",
  "flowcontrol.apiserver.k8s.io",
  "internal.apiserver.k8s.io",
  "networking.k8s.io",
  "node.k8s.io",
  "policy",
  "rbac.authorization.k8s.io",
  "resource.k8s.io",
  "scheduling.k8s.io",
  "storage.k8s.io",
  "storagemigration.k8s.io",
]);

/** The Go package a built-in group's objects are stored as: the group's first name, `core` for the core group (and events.k8s.io, stored as core Events). */
function goPackage(group: string): string {
  return group === "" || group === "events.k8s.io" ? "core" : group.split(".")[0];
}

/** The kind a plural resource name can stand for, in lower case: `leases` → lease, `ingresses` → ingress, `networkpolicies` → networkpolicy, `endpoints` → endpoints. */
function kindsOf(resource: string): string[] {
  const kinds = new Set([resource]);
  if (resource.endsWith("s")) kinds.add(resource.slice(0, -1));
  if (resource.endsWith("es")) kinds.add(resource.slice(0, -2));
  if (resource.endsWith("ies")) kinds.add(`${resource.slice(0, -3)}y`);
  return [...kinds];
}

/**
 * The matcher of a resource's writes in etcd's Go-type label (case-insensitive: the type spells the kind,
 * the resource its plural): undefined for every resource, `custom` where the group is not built in.
 */
export function goTypeResource(resource: string | undefined, group: string | undefined): Matcher | "custom" | undefined {
  if (resource === undefined) return undefined;
  if (group !== undefined && !BUILT_IN_GROUPS.has(group)) return "custom";
  const pkg = group === undefined ? "[a-z0-9]+" : escapeRegex(goPackage(group));
  return m("type", "=~", `(?i)\\*${pkg}\\.(${literalAlternation(kindsOf(resource.toLowerCase()))})`);
}

/** The storage-event series of the view's resource, in the form the scrape labels them (group apart from 1.34, dotted before). */
export function storageResource(vars: PanelVars): (Matcher | undefined)[] {
  return vars.labelSets.storageEvents === "resource"
    ? [dottedResource("resource", vars.resource, vars.group)]
    : [m("resource", "=", vars.resource), m("group", "=", vars.group)];
}
