/**
 * An object's place in URLs, shared by the timeline page, its API and every link to it:
 * {cluster}/{group}/{kind}/{namespace}/{name}, with "core" for the core group and "_" for no namespace.
 */
import { badRequest } from "../api/envelope";
import type { ObjectKey } from "../store/store";

export const OBJECT_PATH_HELP = "{cluster}/{group}/{kind}/{namespace}/{name} (group core for the core API, namespace _ when cluster-scoped)";

export function objectPath(key: ObjectKey): string {
  return [key.cluster, key.group || "core", key.kind, key.namespace || "_", key.name].map(encodeURIComponent).join("/");
}

/** The key from five path segments (Next hands them over already decoded). */
export function objectKeyFromSegments(segments: string[]): ObjectKey {
  if (segments.length !== 5) throw badRequest(`an object is ${OBJECT_PATH_HELP}; this path has ${segments.length} parts`);
  const [cluster, group, kind, namespace, name] = segments;
  for (const [label, value] of [["cluster", cluster], ["group", group], ["kind", kind], ["namespace", namespace], ["name", name]]) {
    if (value.length === 0 || value.length > 253) throw badRequest(`path segment ${label}: expected 1–253 characters`);
  }
  return { cluster, group: group === "core" ? "" : group, kind, namespace: namespace === "_" ? "" : namespace, name };
}
