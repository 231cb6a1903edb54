/** Links between the object views; every link carries the range and the open snapshot. */
import { parseAsString } from "nuqs";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { objectPath } from "@/lib/objects/key";
import { splitResource } from "@/lib/panels/resource-name";
import type { ObjectKey } from "@/lib/wire/objects";
import { DEFAULT_FROM, DEFAULT_TO } from "@/lib/time/range";

/** The URL state Objects and Field churn share: the range and which objects (cluster, group, kind, namespace). */
export const objectFilterState = {
  from: parseAsString.withDefault(DEFAULT_FROM),
  to: parseAsString.withDefault(DEFAULT_TO),
  cluster: parseAsString,
  group: parseAsString,
  kind: parseAsString,
  namespace: parseAsString,
};

/** An object's timeline; with `write`, that write picked (its diff open). */
export function timelineHref(key: ObjectKey, params: { from: number; to: number; snapshot?: string; write?: number }): string {
  const search = new URLSearchParams({ from: String(params.from), to: String(params.to) });
  if (params.snapshot) search.set("snapshot", params.snapshot);
  if (params.write !== undefined) search.set("write", String(params.write));
  return `/objects/${objectPath(key)}?${search}`;
}

export const CLASS_COLORS: Record<string, string> = {
  routed: "#dc2626",
  unrouted: "#f59e0b",
  "no-op": "#9ca3af",
  create: "#16a34a",
  delete: "#6b7280",
  unknown: "#a78bfa",
};

/** The Objects view for a Write load resource (resource.group): its kind when a profile names it, else the group. */
export function objectsHref(resource: string, params: { from: number; to: number; snapshot?: string }): string {
  const [plural, group = ""] = splitResource(resource);
  const profile = DEFAULT_PROFILES.find((p) => p.resource === plural && p.group === group);
  const search = new URLSearchParams({ from: String(params.from), to: String(params.to), group });
  if (profile) search.set("kind", profile.kind);
  if (params.snapshot) search.set("snapshot", params.snapshot);
  return `/objects?${search}`;
}
