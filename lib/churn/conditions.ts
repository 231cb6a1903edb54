/**
 * Condition clocks: what a write did to its object's `lastTransitionTime`s, read from the two versions it lies between
 * (any kind: no profile is needed). A condition whose status changed while its clock stayed (a **frozen** clock, as when
 * a controller changes the condition `meta.FindStatusCondition` returned before `meta.SetStatusCondition`), one whose
 * clock moved while its status did not (**restamped**, as when every reconcile builds conditions with the current time),
 * and a clock older than the object itself (**predates**, a CRD's 1970-01-01 default left in place). Transition times
 * so broken cannot rule flapping in or out; Churnscope counts transitions from the versions it saw.
 */
import { jsonEqual, sortedJson, type Json } from "./json";

/** `moved`: a transition with its clock moved, as it should; kept so a sentence can say whether the clock ever moved. */
export type ClockFinding = "frozen" | "restamped" | "predates" | "moved";
/** The findings that are faults. */
export const CLOCK_FAULTS: readonly ClockFinding[] = ["frozen", "restamped", "predates"];

/** What one write did to its conditions' clocks: each finding with the condition types it was found on. */
export interface ConditionClocks {
  findings: { finding: ClockFinding; type: string }[];
  /** the write changed nothing but conditions' clocks (beside what every write changes: resourceVersion, managedFields) */
  clockOnly: boolean;
}

type Obj = { [key: string]: Json };
interface Condition {
  type: string;
  status: string;
  /** the clock in ms, NaN when absent or unreadable */
  clockMs: number;
  clock: Json | undefined;
  item: Obj;
}

/** Condition types kept per write: a summary of fixed size, whatever a status carries. */
export const MAX_CLOCK_TYPES = 8;
const MAX_TYPE_CHARS = 63;
/** How deep below `status` condition lists are looked for (`status.parents[*].conditions` is two). */
const MAX_DEPTH = 3;

const isObj = (value: Json | undefined): value is Obj => value !== null && value !== undefined && typeof value === "object" && !Array.isArray(value);

const isConditionList = (list: Json[]): boolean => list.length > 0 && list.every((c) => isObj(c) && typeof c.type === "string" && typeof c.status === "string");

/** A list item's name among its siblings, so the same entry is compared across versions whatever the order. */
function itemKey(item: Json, index: number): string {
  if (!isObj(item)) return `#${index}`;
  if (typeof item.name === "string") return item.name;
  // Gateway API route status: one entry per parent and controller.
  if (isObj(item.parentRef)) return `${sortedJson(item.parentRef)}|${String(item.controllerName ?? "")}`;
  return `#${index}`;
}

/** Every condition below `status`, by where it sits and its type. */
function conditionsOf(obj: Json | undefined): Map<string, Condition> {
  const out = new Map<string, Condition>();
  const status = isObj(obj) ? obj.status : undefined;
  const walk = (node: Json | undefined, where: string, depth: number) => {
    if (!isObj(node) || depth > MAX_DEPTH) return;
    for (const [key, value] of Object.entries(node)) {
      if (!Array.isArray(value)) {
        if (isObj(value)) walk(value, `${where}.${key}`, depth + 1);
        continue;
      }
      if (key === "conditions" && isConditionList(value)) {
        for (const c of value as Obj[]) {
          const clock = c.lastTransitionTime;
          const clockMs = typeof clock === "string" ? Date.parse(clock) : NaN;
          out.set(`${where}|${c.type as string}`, { type: c.type as string, status: c.status as string, clockMs, clock, item: c });
        }
        continue;
      }
      value.forEach((item, i) => walk(item, `${where}.${key}[${itemKey(item, i)}]`, depth + 1));
    }
  };
  walk(status, "status", 0);
  return out;
}

/** The object's creation time in ms (the API server keeps whole seconds), NaN when not known. */
function createdMs(obj: Json | undefined): number {
  const meta = isObj(obj) ? obj.metadata : undefined;
  return isObj(meta) && typeof meta.creationTimestamp === "string" ? Date.parse(meta.creationTimestamp) : NaN;
}

/** The condition without its clock, to say whether anything else of it changed. */
function withoutClock(item: Obj): Obj {
  const { lastTransitionTime: _clock, ...rest } = item;
  return rest;
}

/** A copy of `status` with every condition's clock left out (only called when some clock moved). */
function statusWithoutClocks(node: Json | undefined, depth = 0): Json | undefined {
  if (Array.isArray(node)) {
    if (isConditionList(node)) return node.map((c) => withoutClock(c as Obj));
    return node.map((item) => statusWithoutClocks(item, depth + 1) as Json);
  }
  if (!isObj(node) || depth > MAX_DEPTH + 1) return node;
  const copy: Obj = {};
  for (const [key, value] of Object.entries(node)) copy[key] = statusWithoutClocks(value, depth + 1) as Json;
  return copy;
}

/** Everything but status and what every write changes. */
function restOf(obj: Json | undefined): Json | undefined {
  if (!isObj(obj)) return obj;
  const { status: _status, ...rest } = obj;
  const meta = isObj(rest.metadata) ? rest.metadata : undefined;
  if (!meta) return rest;
  const { resourceVersion: _rv, managedFields: _mf, generation: _gen, ...keptMeta } = meta;
  return { ...rest, metadata: keptMeta };
}

/**
 * What a write did to condition clocks: `before` undefined for a create (only clocks older than the object are
 * findings then). Undefined when it found nothing, so most writes carry nothing.
 */
export function conditionClocks(before: Json | undefined, after: Json | undefined): ConditionClocks | undefined {
  if (!isObj(after) || !isObj(after.status)) return undefined;
  const now = conditionsOf(after);
  if (now.size === 0) return undefined;
  const then = conditionsOf(before);
  const created = createdMs(after);
  const seen = new Set<string>();
  const findings: ConditionClocks["findings"] = [];
  const add = (finding: ClockFinding, type: string) => {
    const cut = type.slice(0, MAX_TYPE_CHARS);
    const key = `${finding}|${cut}`;
    if (seen.has(key) || findings.length >= MAX_CLOCK_TYPES) return;
    seen.add(key);
    findings.push({ finding, type: cut });
  };
  let clockMoved = false;
  for (const [where, c] of now) {
    const old = then.get(where);
    if (old) {
      const sameClock = jsonEqual(old.clock, c.clock);
      if (!sameClock) clockMoved = true;
      if (old.status !== c.status && sameClock && c.clock !== undefined) add("frozen", c.type);
      else if (old.status !== c.status && !sameClock) add("moved", c.type);
      else if (old.status === c.status && !sameClock && old.clock !== undefined && c.clock !== undefined) add("restamped", c.type);
    }
    // A clock older than the object, on a condition this write set or changed (a create's, or one it touched).
    const touched = !old || !jsonEqual(withoutClock(old.item), withoutClock(c.item));
    if (touched && c.clockMs < Math.floor(created / 1000) * 1000) add("predates", c.type);
  }
  const clockOnly =
    before !== undefined &&
    clockMoved &&
    jsonEqual(statusWithoutClocks((before as Obj).status), statusWithoutClocks(after.status)) &&
    jsonEqual(restOf(before), restOf(after));
  return findings.length > 0 || clockOnly ? { findings, clockOnly } : undefined;
}

const LETTER: Record<ClockFinding, string> = { frozen: "f", restamped: "r", predates: "p", moved: "t" };
const FINDING: Record<string, ClockFinding> = { f: "frozen", r: "restamped", p: "predates", t: "moved" };

/**
 * What a write's versions say beyond its class: an **echo** (the API server answered with the version the object
 * already had: it wrote nothing), and its condition clocks. Stored with the write as one short JSON list: `e` for an
 * echo, `=` when only clocks changed, then `f`/`r`/`p`/`t` and the condition type per finding.
 */
export interface WriteTraits {
  echo?: boolean;
  clocks?: ConditionClocks;
}

export function traitsText(traits: WriteTraits): string | null {
  const items = [
    ...(traits.echo ? ["e"] : []),
    ...(traits.clocks?.clockOnly ? ["="] : []),
    ...(traits.clocks?.findings ?? []).map((f) => `${LETTER[f.finding]}${f.type}`),
  ];
  return items.length === 0 ? null : JSON.stringify(items);
}

/** Reads the stored form back; anything unreadable reads as nothing. */
export function traitsOf(text: string | null | undefined): WriteTraits {
  if (!text) return {};
  let items: unknown;
  try {
    items = JSON.parse(text);
  } catch {
    return {};
  }
  if (!Array.isArray(items)) return {};
  const findings: ConditionClocks["findings"] = [];
  for (const item of items) if (typeof item === "string" && FINDING[item[0]]) findings.push({ finding: FINDING[item[0]], type: item.slice(1) });
  const clockOnly = items.includes("=");
  return { ...(items.includes("e") ? { echo: true } : {}), ...(findings.length > 0 || clockOnly ? { clocks: { findings, clockOnly } } : {}) };
}
