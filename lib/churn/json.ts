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

export function jsonEqual(a: Json | undefined, b: Json | undefined): boolean {
  if (a === undefined || b === undefined) return a === b;
  return sortedJson(a) === sortedJson(b);
}
