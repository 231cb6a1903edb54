/**
 * The field path syntax diffs use (`status.conditions[type=Ready].message`,
 * `metadata.annotations["a/b"]`), parsed into segments, applied to objects, and mapped onto
 * managedFields' fieldsV1 keys (`f:status`, `k:{"type":"Ready"}`).
 */
import { cloneJson, type Json } from "./json";

export type Segment = { key: string } | { listKey: string; value: string };

export function parsePath(path: string): Segment[] {
  const out: Segment[] = [];
  let i = 0;
  while (i < path.length) {
    if (path[i] === ".") i++;
    if (path[i] === "[") {
      if (path[i + 1] === '"') {
        // ["quoted key"]: a JSON string literal
        let j = i + 2;
        while (j < path.length && !(path[j] === '"' && path[j - 1] !== "\\")) j++;
        out.push({ key: JSON.parse(path.slice(i + 1, j + 1)) as string });
        i = j + 2;
      } else {
        const close = path.indexOf("]", i);
        const inner = path.slice(i + 1, close);
        const eq = inner.indexOf("=");
        out.push({ listKey: inner.slice(0, eq), value: inner.slice(eq + 1) });
        i = close + 1;
      }
    } else {
      let j = i;
      while (j < path.length && path[j] !== "." && path[j] !== "[") j++;
      out.push({ key: path.slice(i, j) });
      i = j;
    }
  }
  return out;
}

type Obj = { [key: string]: Json };
const isObj = (v: Json | undefined): v is Obj => v !== null && v !== undefined && typeof v === "object" && !Array.isArray(v);

/** An object with recorded field changes applied in order (a version rebuilt from the one before it). */
export function applyChanges(root: Json | undefined, changes: { path: string; after?: unknown }[]): Json | undefined {
  let node = root;
  for (const change of changes) node = setPath(node, change.path, change.after === undefined ? undefined : cloneJson(change.after as Json));
  return node;
}

/** Sets (or, with `value` undefined, removes) the field at `path` in place; `path` "" replaces the whole object. */
export function setPath(root: Json | undefined, path: string, value: Json | undefined): Json | undefined {
  if (path === "") return value;
  const segments = parsePath(path);
  let node: Json | undefined = root;
  for (let s = 0; s < segments.length - 1; s++) node = child(node, segments[s], segments[s + 1]);
  const last = segments[segments.length - 1];
  if ("key" in last) {
    if (!isObj(node)) throw new Error(`cannot set ${path}: parent is not an object`);
    if (value === undefined) delete node[last.key];
    else node[last.key] = value;
  } else {
    if (!Array.isArray(node)) throw new Error(`cannot set ${path}: parent is not a list`);
    const index = node.findIndex((item) => isObj(item) && item[last.listKey] === last.value);
    if (value === undefined) {
      if (index >= 0) node.splice(index, 1);
    } else if (index >= 0) node[index] = value;
    else node.push(value);
  }
  return root;
}

function child(node: Json | undefined, segment: Segment, next: Segment): Json {
  if ("key" in segment) {
    if (!isObj(node)) throw new Error("path goes through a non-object");
    if (node[segment.key] === undefined) node[segment.key] = "key" in next ? {} : [];
    return node[segment.key];
  }
  if (!Array.isArray(node)) throw new Error("path goes through a non-list");
  let item = node.find((x) => isObj(x) && x[segment.listKey] === segment.value);
  if (!item) {
    item = { [segment.listKey]: segment.value };
    node.push(item);
  }
  return item;
}

/** The fieldsV1 keys for a path: f:<field> for fields, k:{"<key>":"<value>"} for list-map items. */
export function fieldsV1Keys(path: string): string[] {
  return parsePath(path).map((s) => ("key" in s ? `f:${s.key}` : `k:${JSON.stringify({ [s.listKey]: s.value })}`));
}

/** Whether a manager's fieldsV1 set owns the field at `path` (or an atomic ancestor of it). */
export function ownsPath(fieldsV1: Json | undefined, path: string): boolean {
  let node = fieldsV1;
  for (const key of fieldsV1Keys(path)) {
    if (!isObj(node)) return false;
    const next = node[key];
    if (next === undefined) return false;
    // A leaf owns everything below it (an atomic value or list).
    if (isObj(next) && Object.keys(next).length === 0) return true;
    node = next;
  }
  return true;
}
