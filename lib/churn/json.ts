/** JSON helpers with Go's encoding/json behaviour where it matters for comparing objects. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/**
 * Compact JSON with object keys sorted at every level, as Go's json.Marshal writes an unstructured
 * map (the replicator's upstream-status annotation is produced this way). List order is kept.
 */
export function sortedJson(value: Json): string {
  if (value === null || typeof value !== "object") return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map(sortedJson).join(",")}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((k) => `${JSON.stringify(k)}:${sortedJson(value[k])}`).join(",")}}`;
}

/** Equal as JSON values: object key order does not matter, list order does (what comparing sortedJson says, without building strings). */
export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === b) return true;
  if (a === null || b === null || a === undefined || b === undefined || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!jsonEqual(a[i], b[i])) return false;
    return true;
  }
  const keys = Object.keys(a);
  if (keys.length !== Object.keys(b).length) return false;
  for (const key of keys) if (!(key in b) || !jsonEqual(a[key], b[key])) return false;
  return true;
}

/**
 * A deep copy of a JSON value: what structuredClone gives for one, about eight times faster, as it walks the value
 * instead of serialising it (the replay's generator copies objects for each of its 104 k writes).
 */
export function cloneJson<T extends Json | undefined>(value: T): T {
  if (typeof value !== "object" || value === null) return value;
  if (Array.isArray(value)) {
    const items: Json[] = new Array(value.length);
    for (let i = 0; i < value.length; i++) items[i] = cloneJson(value[i]);
    return items as T;
  }
  const copy: { [key: string]: Json } = {};
  for (const key of Object.keys(value)) {
    const item = cloneJson((value as { [key: string]: Json })[key]);
    // JSON.parse makes "__proto__" an own key; assigned, it would set the copy's prototype instead.
    if (key === "__proto__") Object.defineProperty(copy, key, { value: item, enumerable: true, writable: true, configurable: true });
    else copy[key] = item;
  }
  return copy as T;
}
