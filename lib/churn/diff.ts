/**
 * Field-level difference between two versions of an object. Paths read like kubectl's JSONPath
 * without the leading dot: `status.conditions[type=Ready].message`. Lists whose items all carry a
 * `type` (conditions) or a `name` are compared item by item under that key, as Kubernetes list-maps
 * merge; any other list is one value, so a reordered list shows as a change of the whole list.
 */
import { jsonEqual, type Json } from "./json";

export interface FieldChange {
  path: string;
  /** absent when the field was added */
  before?: Json;
  /** absent when the field was removed */
  after?: Json;
}

/** Paths never worth reporting: they change on every write by construction. */
export const ALWAYS_IGNORED = ["metadata.resourceVersion", "metadata.managedFields", "metadata.generation"];
/** The same as JSONPaths, as profiles name what they leave out: every profile leaves these out. */
export const ALWAYS_IGNORED_PATHS = ALWAYS_IGNORED.map((path) => `$.${path}`);

const PLAIN_KEY = /^[A-Za-z_][A-Za-z0-9_-]*$/;

export function childPath(parent: string, key: string): string {
  const segment = PLAIN_KEY.test(key) ? key : `[${JSON.stringify(key)}]`;
  if (parent === "") return segment;
  return segment.startsWith("[") ? `${parent}${segment}` : `${parent}.${segment}`;
}

function listKey(items: Json[]): "type" | "name" | null {
  for (const key of ["type", "name"] as const) {
    if (items.length > 0 && items.every((i) => i !== null && typeof i === "object" && !Array.isArray(i) && typeof i[key] === "string")) return key;
  }
  return null;
}

function isObject(v: Json | undefined): v is { [key: string]: Json } {
  return v !== null && v !== undefined && typeof v === "object" && !Array.isArray(v);
}

export function diffObjects(before: Json | undefined, after: Json | undefined, ignored: readonly string[] = ALWAYS_IGNORED): FieldChange[] {
  const out: FieldChange[] = [];
  walk(before, after, "", new Set(ignored), out);
  return out;
}

function walk(a: Json | undefined, b: Json | undefined, path: string, ignored: Set<string>, out: FieldChange[]): void {
  if (ignored.has(path)) return;
  if (isObject(a) && isObject(b)) {
    // Most fields of a version are as they were: an unchanged value that holds nothing below it is passed over
    // before its path is even spelled (the recorder diffs every version it sees).
    for (const key in a) {
      const [va, vb] = [a[key], b[key]];
      if (va !== vb || (va !== null && typeof va === "object")) walk(va, vb, childPath(path, key), ignored, out);
    }
    for (const key in b) if (!Object.hasOwn(a, key)) walk(undefined, b[key], childPath(path, key), ignored, out);
    return;
  }
  if (Array.isArray(a) && Array.isArray(b)) {
    const key = listKey([...a, ...b]);
    if (key) {
      const byKey = (items: Json[]) => new Map(items.map((i) => [(i as Record<string, Json>)[key] as string, i]));
      const left = byKey(a);
      const right = byKey(b);
      // A list-map: items are matched by key, so their order does not matter (as when Kubernetes merges).
      if (left.size === a.length && right.size === b.length) {
        for (const k of new Set([...left.keys(), ...right.keys()])) walk(left.get(k), right.get(k), `${path}[${key}=${k}]`, ignored, out);
        return;
      }
    }
  }
  if (jsonEqual(a, b)) return;
  const change: FieldChange = { path };
  if (a !== undefined) change.before = a;
  if (b !== undefined) change.after = b;
  out.push(change);
}
