/**
 * The recorder's pure core: given an object's previous and new version, say what changed (after
 * the profile's normalisation), whether it changed what the consumer routes on, and who wrote it
 * (from managedFields). Used for watch events and for the replay alike.
 */
import { changeOf, type RecordedChange } from "./changes";
import { conditionClocks, type WriteTraits } from "./conditions";
import { JSONPath } from "jsonpath-plus";
import { diffObjects, type FieldChange } from "./diff";
import { cloneJson, sortedJson, type Json } from "./json";
import { ownsPath } from "./paths";
import type { WriteClass } from "./write-class";
import type { Profile } from "./profiles";

export interface Analysis {
  cls: WriteClass;
  changes: FieldChange[];
  writer: string;
  /** every change is an expected heartbeat field (e.g. a Lease's renewTime) */
  heartbeat: boolean;
  /** the routed projection after the write (before it, for a delete) */
  projection: Record<string, string>;
  /** what the write changed in a workload or a GitOps revision, when its profile records changes */
  change?: RecordedChange;
  /** an echo, and what it did to condition clocks (conditions.ts); absent when neither */
  traits?: WriteTraits;
}

type Obj = { [key: string]: Json };

const PLAIN_PATH = /^\$(\.[A-Za-z_][A-Za-z0-9_-]*)+$/;

/** Each path's keys when it is plain (`$.spec.holderIdentity`, or `$`), null when it is not: split once. */
const plainKeys = new Map<string, string[] | null>();
const MAX_PATHS = 1_000;

function keysOf(path: string): string[] | null {
  let keys = plainKeys.get(path);
  if (keys === undefined) {
    keys = path === "$" ? [] : PLAIN_PATH.test(path) ? path.slice(2).split(".") : null;
    if (plainKeys.size < MAX_PATHS) plainKeys.set(path, keys);
  }
  return keys;
}

/**
 * The values a JSONPath names, as jsonpath-plus reads them. A plain path through maps is followed key by key (most
 * profiles' paths, read on every write, at a fifteenth of the library's cost); anything else is the library's to
 * read, a list's `length` included.
 */
export function query(path: string, json: Json): Json[] {
  const keys = keysOf(path);
  if (keys !== null && json !== null && typeof json === "object" && !Array.isArray(json)) {
    let node: Json = json;
    for (const key of keys) {
      if (node === null || typeof node !== "object" || Array.isArray(node)) return jsonPath(path, json);
      if (!Object.hasOwn(node, key)) return [];
      node = node[key];
    }
    return [node];
  }
  return jsonPath(path, json);
}

function jsonPath(path: string, json: Json): Json[] {
  return JSONPath({ path, json: json as object, eval: "safe", wrap: true, ignoreEvalErrors: true }) as Json[];
}

/** Plain ignore paths as a tree of keys: `true` where a value is removed. */
type KeyTree = Map<string, KeyTree | true>;
/** Each profile's tree, or null when it has an ignore path that is not plain, or unordered lists. */
const keyTrees = new WeakMap<Profile, KeyTree | null>();

function plainTree(profile: Profile): KeyTree | null {
  let tree = keyTrees.get(profile);
  if (tree === undefined) {
    const paths = profile.ignore.map(keysOf);
    const plain = paths.every((keys) => keys !== null && keys.length > 0) && profile.unordered.length === 0;
    tree = plain ? treeOf(paths as string[][]) : null;
    keyTrees.set(profile, tree);
  }
  return tree;
}

function treeOf(paths: string[][]): KeyTree {
  const tree: KeyTree = new Map();
  for (const keys of paths) {
    let node = tree;
    keys.forEach((key, i) => {
      const next = node.get(key);
      if (i === keys.length - 1) node.set(key, true);
      else if (next === true) return;
      else node = next ?? (node.set(key, new Map()).get(key) as KeyTree);
    });
  }
  return tree;
}

const isEmptyMap = (value: Json): boolean => value !== null && typeof value === "object" && !Array.isArray(value) && Object.keys(value).length === 0;

/** Once the value at `pointer` (a JSON pointer) is gone, removes each map above it that it left empty, as `without` does. */
function dropEmptyParents(root: Json, pointer: string): void {
  const keys = pointer
    .split("/")
    .slice(1)
    .map((k) => k.replace(/~1/g, "/").replace(/~0/g, "~"));
  for (let depth = keys.length - 1; depth >= 1; depth--) {
    let holder: Json | undefined = root;
    for (const key of keys.slice(0, depth - 1)) holder = holder !== null && typeof holder === "object" ? (holder as Obj)[key] : undefined;
    if (holder === null || typeof holder !== "object" || Array.isArray(holder)) return;
    const child = holder[keys[depth - 1]];
    if (child === undefined || !isEmptyMap(child)) return;
    delete holder[keys[depth - 1]];
  }
}

/**
 * `node` without the values the tree names, copying only the objects on the way (built key by key,
 * not copied and deleted from, so they stay fast to read); `node` itself when it holds none of them.
 */
function without(node: Json, tree: KeyTree): Json {
  if (node === null || typeof node !== "object" || Array.isArray(node)) return node;
  let changed: Map<string, Json | undefined> | undefined;
  for (const [key, sub] of tree) {
    if (!(key in node)) continue;
    let value = sub === true ? undefined : without(node[key], sub);
    // A map that held only ignored keys is as good as none: the API server leaves empty maps out (annotations, labels).
    if (value !== undefined && value !== node[key] && isEmptyMap(value)) value = undefined;
    if (value !== node[key]) (changed ??= new Map()).set(key, value);
  }
  if (!changed) return node;
  const copy: Obj = {};
  for (const key in node) {
    if (!changed.has(key)) copy[key] = node[key];
    else if (changed.get(key) !== undefined) copy[key] = changed.get(key)!;
  }
  return copy;
}

/** A copy with ignored paths removed and unordered lists sorted, so neither shows up as a change. */
export function normalise(profile: Profile, obj: Json | undefined): Json | undefined {
  if (obj === undefined || obj === null) return obj;
  // The common case, plain paths such as $.metadata.managedFields and no unordered lists, copies only
  // the objects along each path: the result is read, never changed, so the rest can be shared.
  const tree = plainTree(profile);
  if (tree) return without(obj, tree);
  const copy = cloneJson(obj);
  for (const path of profile.ignore) {
    const pointers = JSONPath({ path, json: copy as object, eval: "safe", resultType: "all", ignoreEvalErrors: true }) as {
      parent: Obj | Json[];
      parentProperty: string | number;
      pointer: string;
    }[];
    // Deepest first, and list items from the end, so removals do not shift later pointers.
    for (const p of pointers.reverse()) {
      if (Array.isArray(p.parent)) p.parent.splice(Number(p.parentProperty), 1);
      else if (p.parent && typeof p.parent === "object") {
        delete (p.parent as Obj)[p.parentProperty as string];
        if (isEmptyMap(p.parent)) dropEmptyParents(copy, p.pointer);
      }
    }
  }
  for (const path of profile.unordered) {
    for (const list of query(path, copy)) if (Array.isArray(list)) list.sort((a, b) => sortedJson(a).localeCompare(sortedJson(b)));
  }
  return copy;
}

/** The routed projection, read from the annotation's JSON when present and parsable (else from source.path), as the consumer reads it. */
export function project(profile: Profile, obj: Json | undefined): Record<string, string> {
  if (obj === undefined || obj === null) return {};
  let source: Json | undefined;
  const annotation = profile.source.annotation;
  const raw = annotation ? ((obj as Obj).metadata as Obj | undefined)?.annotations : undefined;
  if (annotation && raw && typeof (raw as Obj)[annotation] === "string") {
    try {
      source = JSON.parse((raw as Obj)[annotation] as string) as Json;
    } catch {
      source = undefined; // unparsable: fall back to the live field, like the consumer
    }
  }
  if (source === undefined) source = query(profile.source.path, obj)[0];
  const out: Record<string, string> = {};
  for (const [name, field] of Object.entries(profile.routed)) {
    const values = source === undefined || source === null ? [] : query(field.path, source);
    const value =
      values.length === 0 ? "" : values.length === 1 && typeof values[0] === "string" ? values[0] : sortedJson(values.length === 1 ? values[0] : values);
    out[name] = field.equals === undefined ? value : String(value === field.equals);
  }
  for (const [name, field] of Object.entries(profile.routed)) {
    if (field.onlyWhen && out[field.onlyWhen.field] !== field.onlyWhen.equals) out[name] = "";
  }
  return out;
}

interface ManagedEntry {
  manager?: string;
  time?: string;
  fieldsV1?: Json;
}

/** The manager whose managedFields entry this write touched and that owns the changed paths; "unknown" when none does. */
export function attribute(before: Json | undefined, after: Json | undefined, changes: FieldChange[]): string {
  // Whatever the object carries: a managedFields that is not a list of entries attributes nothing.
  const entries = (o: Json | undefined): ManagedEntry[] => {
    const fields = ((o as Obj | undefined)?.metadata as Obj | undefined)?.managedFields;
    return Array.isArray(fields) ? fields.filter((e): e is Obj => typeof e === "object" && e !== null && !Array.isArray(e)).map((e) => e as ManagedEntry) : [];
  };
  const previous = new Map(entries(before).map((e) => [`${e.manager}`, e.time]));
  const paths = changes.map((c) => c.path).filter((p) => p !== "");
  let best: { manager: string; touched: boolean; owned: number; time: string } | undefined;
  for (const entry of entries(after)) {
    if (typeof entry.manager !== "string" || entry.manager === "") continue;
    const owned = paths.filter((p) => ownsPath(entry.fieldsV1, p)).length;
    const touched = previous.get(entry.manager) !== entry.time;
    if (owned === 0 && !(touched && paths.length === 0)) continue;
    const candidate = { manager: entry.manager, touched, owned, time: typeof entry.time === "string" ? entry.time : "" };
    const better =
      !best ||
      (candidate.touched && !best.touched) ||
      (candidate.touched === best.touched && (candidate.owned > best.owned || (candidate.owned === best.owned && candidate.time > best.time)));
    if (better) best = candidate;
  }
  return best?.manager ?? "unknown";
}

/** One version of an object as the analysis reads it; computed once and reused as the next write's "before". */
export interface Version {
  profile: string;
  obj: Json;
  normalised: Json;
  projection: Record<string, string>;
}

export function prepare(profile: Profile, obj: Json): Version {
  return { profile: profile.name, obj, normalised: normalise(profile, obj) as Json, projection: project(profile, obj) };
}

export function analyze(profile: Profile, before: Json | undefined, after: Json | undefined): Analysis {
  const present = (o: Json | undefined) => (o === undefined || o === null ? undefined : prepare(profile, o));
  return analyzeVersions(profile, present(before), present(after));
}

export function analyzeVersions(profile: Profile, before: Version | undefined, after: Version | undefined): Analysis {
  if (before === undefined) {
    const change = changeOf(profile, "create", [], undefined, after);
    const clocks = conditionClocks(undefined, after?.obj);
    return {
      cls: "create",
      changes: [],
      writer: attribute(undefined, after?.obj, []),
      heartbeat: false,
      projection: after?.projection ?? {},
      ...(change && { change }),
      ...(clocks && { traits: { clocks } }),
    };
  }
  if (after === undefined) {
    return { cls: "delete", changes: [], writer: "unknown", heartbeat: false, projection: before.projection };
  }
  const changes = diffObjects(before.normalised, after.normalised, []);
  const heartbeat = changes.length > 0 && changes.every((c) => profile.heartbeat.includes(c.path));
  // A new version that differs only where the profile ignores (a condition's lastTransitionTime, managedFields) changed nothing it reads.
  const cls = changes.length === 0 ? "no-op" : sameProjection(before.projection, after.projection) ? "unrouted" : "routed";
  const change = changeOf(profile, cls, changes, before, after);
  const clocks = conditionClocks(before.obj, after.obj);
  return {
    cls,
    changes,
    writer: attribute(before.obj, after.obj, changes),
    heartbeat,
    projection: after.projection,
    ...(change && { change }),
    ...(clocks && { traits: { clocks } }),
  };
}

function sameProjection(a: Record<string, string>, b: Record<string, string>): boolean {
  const keys = Object.keys(a);
  return keys.length === Object.keys(b).length && keys.every((k) => a[k] === b[k]);
}
