/**
 * An object's place in URLs, shared by the timeline page, its API and every link to it:
 * {cluster}/{group}/{kind}/{namespace}/{name}, with "core" for the core group and "_" for no namespace.
 */
import { badRequest } from "../api/envelope";
import type { ObjectKey } from "../wire/objects";

export const OBJECT_PATH_HELP = "{cluster}/{group}/{kind}/{namespace}/{name} (group core for the core API, namespace _ when cluster-scoped)";

/** One text per object, for maps keyed by object (no part of a key can hold a NUL). */
export const objectKeyText = (key: ObjectKey) => `${key.cluster}\u0000${key.group}\u0000${key.kind}\u0000${key.namespace}\u0000${key.name}`;

/** How an object is named to a reader: "Deployment apps/web", or "Namespace apps" for one without a namespace. */
export const objectLabel = (key: Pick<ObjectKey, "kind" | "namespace" | "name">) => `${key.kind} ${key.namespace ? `${key.namespace}/` : ""}${key.name}`;

export function objectPath(key: ObjectKey): string {
  return [key.cluster, key.group || "core", key.kind, key.namespace || "_", key.name].map(encodeURIComponent).join("/");
}

/**
 * A path segment's value, decoded once if it still holds %-escapes. Next hands a route handler its
 * segments decoded but a page some of them still encoded; a valid segment never holds a `%` itself
 * (Kubernetes names, namespaces and groups cannot, nor can cluster names), so one decode is exact.
 */
function segmentValue(label: string, raw: string): string {
  let value = raw;
  if (raw.includes("%")) {
    try {
      value = decodeURIComponent(raw);
    } catch {
      throw badRequest(`path segment ${label}: a malformed %-escape`);
    }
  }
  if (value.length === 0 || value.length > 253) throw badRequest(`path segment ${label}: expected 1–253 characters`);
  if (value.includes("/") || value.includes("%")) throw badRequest(`path segment ${label}: a name cannot contain / or %`);
  return value;
}

/** The key from five path segments, decoded or not. */
export function objectKeyFromSegments(segments: string[]): ObjectKey {
  if (segments.length !== 5) throw badRequest(`an object is ${OBJECT_PATH_HELP}; this path has ${segments.length} parts`);
  const labels = ["cluster", "group", "kind", "namespace", "name"] as const;
  const [cluster, group, kind, namespace, name] = segments.map((raw, i) => segmentValue(labels[i], raw));
  return { cluster, group: group === "core" ? "" : group, kind, namespace: namespace === "_" ? "" : namespace, name };
}
