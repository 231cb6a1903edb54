/**
 * API Priority and Fairness: which FlowSchema a request falls into, as the API server decides it. Schemas are tried
 * by matchingPrecedence (lowest first; ties by name); the first with a rule whose subjects name the request's user
 * (its name, one of its groups, or its service account) and whose resource or non-resource rule covers the request
 * takes it. Read from the FlowSchema objects the recorder watched. Pure.
 */
import type { Json } from "./json";

/** The kind the recorder watches FlowSchemas as (its default profile `flowschema`). */
export const FLOW_SCHEMA = { group: "flowcontrol.apiserver.k8s.io", version: "v1", resource: "flowschemas", kind: "FlowSchema" } as const;

interface Subject {
  kind: string;
  user?: { name?: string };
  group?: { name?: string };
  serviceAccount?: { namespace?: string; name?: string };
}

interface ResourceRule {
  verbs?: string[];
  apiGroups?: string[];
  resources?: string[];
  clusterScope?: boolean;
  namespaces?: string[];
}

interface NonResourceRule {
  verbs?: string[];
  nonResourceURLs?: string[];
}

/** A FlowSchema as the matcher reads it. */
export interface FlowSchema {
  name: string;
  priorityLevel: string;
  precedence: number;
  rules: { subjects: Subject[]; resourceRules: ResourceRule[]; nonResourceRules: NonResourceRule[] }[];
}

/** A request as APF sees it: who, and what. `path` for a non-resource request (resource ""). */
export interface FlowRequest {
  user: string;
  groups: readonly string[];
  verb: string;
  apiGroup: string;
  resource: string;
  subresource: string;
  namespace: string;
  path: string;
}

const list = (v: unknown): string[] => (Array.isArray(v) ? v.filter((x): x is string => typeof x === "string") : []);
const obj = (v: unknown): Record<string, unknown> => (v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

/** A FlowSchema object (flowcontrol.apiserver.k8s.io, any served version) as the matcher reads it; null when it is not one. */
export function flowSchemaOf(object: Json): FlowSchema | null {
  const o = obj(object);
  const name = obj(o.metadata).name;
  const spec = obj(o.spec);
  const priorityLevel = obj(spec.priorityLevelConfiguration).name;
  if (typeof name !== "string" || typeof priorityLevel !== "string") return null;
  const precedence = typeof spec.matchingPrecedence === "number" ? spec.matchingPrecedence : 1000;
  const rules = (Array.isArray(spec.rules) ? spec.rules : []).map((r) => {
    const rule = obj(r);
    return {
      subjects: (Array.isArray(rule.subjects) ? rule.subjects : []).map((s) => obj(s) as unknown as Subject),
      resourceRules: (Array.isArray(rule.resourceRules) ? rule.resourceRules : []).map((x) => obj(x) as ResourceRule),
      nonResourceRules: (Array.isArray(rule.nonResourceRules) ? rule.nonResourceRules : []).map((x) => obj(x) as NonResourceRule),
    };
  });
  return { name, priorityLevel, precedence, rules };
}

/** Schemas in the order the API server tries them. */
export function inMatchingOrder(schemas: readonly FlowSchema[]): FlowSchema[] {
  return [...schemas].sort((a, b) => a.precedence - b.precedence || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

const has = (values: unknown, value: string) => list(values).some((v) => v === "*" || v === value);

function subjectMatches(s: Subject, r: FlowRequest): boolean {
  switch (s.kind) {
    case "User":
      return s.user?.name === "*" || s.user?.name === r.user;
    case "Group":
      return s.group?.name === "*" || (s.group?.name !== undefined && r.groups.includes(s.group.name));
    case "ServiceAccount": {
      const m = /^system:serviceaccount:([^:]+):([^:]+)$/.exec(r.user);
      return m !== null && s.serviceAccount?.namespace === m[1] && (s.serviceAccount.name === "*" || s.serviceAccount.name === m[2]);
    }
    default:
      return false;
  }
}

function resourceRuleMatches(rule: ResourceRule, r: FlowRequest): boolean {
  if (!has(rule.verbs, r.verb) || !has(rule.apiGroups, r.apiGroup)) return false;
  const resources = list(rule.resources);
  const named = r.subresource ? `${r.resource}/${r.subresource}` : r.resource;
  if (!resources.some((x) => x === "*" || x === named)) return false;
  return r.namespace === "" ? rule.clusterScope === true : has(rule.namespaces, r.namespace);
}

function nonResourceRuleMatches(rule: NonResourceRule, r: FlowRequest): boolean {
  if (!has(rule.verbs, r.verb)) return false;
  // "*" takes every path; "/prefix/*" every path under it.
  return list(rule.nonResourceURLs).some((u) => u === "*" || u === r.path || (u.endsWith("/*") && r.path.startsWith(u.slice(0, -1))));
}

/** The schema that takes the request (`ordered` as inMatchingOrder gives them), or null when none does. */
export function matchFlowSchema(ordered: readonly FlowSchema[], r: FlowRequest): FlowSchema | null {
  for (const schema of ordered)
    for (const rule of schema.rules) {
      if (!rule.subjects.some((s) => subjectMatches(s, r))) continue;
      const covered =
        r.resource === "" ? rule.nonResourceRules.some((x) => nonResourceRuleMatches(x, r)) : rule.resourceRules.some((x) => resourceRuleMatches(x, r));
      if (covered) return schema;
    }
  return null;
}
