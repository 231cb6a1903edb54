/**
 * Flaps and a damping what-if over the routed changes the store saw (never over lastTransitionTime, which a controller
 * may freeze or restamp). A flap is a routed change that the object's next routed change undoes (A → B → A) within a
 * window; each of its two changes cost the consumer a rebuild. The what-if replays each object's changes through a
 * hold-down: a change into the held value (say online=false) reaches the consumer only once it has lasted the hold;
 * any other change at once. It answers the write-up's two success criteria as numbers: how many rebuilds the consumer
 * would have made, and how late the changes that lasted would have reached it.
 */
import type { ObjectKey } from "../wire/objects";

/** One object's routed changes in a range, oldest first: the projection each made, as stored (JSON text). */
export interface ChangeRun {
  key: ObjectKey;
  /** the projection before the first change, where known */
  initial: string | undefined;
  changes: { tsMs: number; projection: string }[];
}

export interface HoldRule {
  /** the projection field whose value is held */
  field: string;
  /** the held value, as the projection spells it ("false" for online) */
  value: string;
  holdMs: number;
}

export interface FlapObject {
  key: ObjectKey;
  flaps: number;
  changes: number;
  /** the time the shortest flap spent in its other state */
  shortestMs: number;
}

export interface FlapFigures {
  windowMs: number;
  rangeMs: number;
  /** routed changes (each a rebuild where the consumer rebuilds on every change) */
  changes: number;
  flaps: number;
  /** routed changes that were half of a flap: the change and its undoing */
  flapChanges: number;
  flapsPerHour: number;
  /** median time in the other state, over all flaps (exact: the middle value, or the mean of the middle two) */
  medianInStateMs: number | null;
  objectsFlapping: number;
  /** the objects that flapped most, most first */
  top: FlapObject[];
  /** flaps per kind */
  byKind: { group: string; kind: string; flaps: number; objects: number }[];
  /** routed changes per equal step of the range: those that were half of a flap, and the others (each a rebuild) */
  steps: { startMs: number; stepMs: number; flap: number[]; lasting: number[] };
}

/** Steps the range is cut into for `steps`. */
export const FLAP_STEPS = 60;

export interface HoldFigures {
  rule: HoldRule;
  /** changes the consumer saw (rebuilds) without the hold, and with it */
  rebuildsWithout: number;
  rebuildsWith: number;
  /** changes into the held value that were undone within the hold: never reached the consumer */
  absorbed: number;
  /** changes into the held value that lasted the hold: reached the consumer exactly `holdMs` late */
  delayed: number;
  /** every other change: reached the consumer at once, as today */
  immediate: number;
  /** held at the range's end, not yet passed */
  stillHeld: number;
}

const median = (values: number[]): number | null => {
  if (values.length === 0) return null;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
};

/** Flaps over every object's run: `windowMs` the longest time in the other state that still counts as a flap. */
export function flapsOf(runs: readonly ChangeRun[], windowMs: number, range: { startMs: number; endMs: number }, topN = 20): FlapFigures {
  let changes = 0;
  let flaps = 0;
  let flapChanges = 0;
  const stepMs = Math.max(1, Math.ceil((range.endMs - range.startMs) / FLAP_STEPS));
  const steps = { startMs: range.startMs, stepMs, flap: new Array<number>(FLAP_STEPS).fill(0), lasting: new Array<number>(FLAP_STEPS).fill(0) };
  const stepOf = (tsMs: number) => Math.min(FLAP_STEPS - 1, Math.max(0, Math.floor((tsMs - range.startMs - 1) / stepMs)));
  const inState: number[] = [];
  const objects: FlapObject[] = [];
  const kinds = new Map<string, { group: string; kind: string; flaps: number; objects: number }>();
  for (const run of runs) {
    changes += run.changes.length;
    let objectFlaps = 0;
    let shortestMs = Infinity;
    // Each change i undoes change i−1 when it brings back what was there before i−1; a change that both ends one flap
    // and starts the next (A → B → A → B) is one half of each, counted once.
    const halves = new Set<number>();
    for (let i = 1; i < run.changes.length; i++) {
      const before = i >= 2 ? run.changes[i - 2].projection : run.initial;
      const inB = run.changes[i].tsMs - run.changes[i - 1].tsMs;
      if (before === undefined || run.changes[i].projection !== before || inB > windowMs) continue;
      objectFlaps++;
      inState.push(inB);
      shortestMs = Math.min(shortestMs, inB);
      halves.add(i - 1).add(i);
    }
    flapChanges += halves.size;
    run.changes.forEach((change, i) => (halves.has(i) ? steps.flap : steps.lasting)[stepOf(change.tsMs)]++);
    if (objectFlaps === 0) continue;
    flaps += objectFlaps;
    objects.push({ key: run.key, flaps: objectFlaps, changes: run.changes.length, shortestMs });
    const kindId = `${run.key.group}/${run.key.kind}`;
    const kind = kinds.get(kindId) ?? kinds.set(kindId, { group: run.key.group, kind: run.key.kind, flaps: 0, objects: 0 }).get(kindId)!;
    kind.flaps += objectFlaps;
    kind.objects++;
  }
  const rangeMs = range.endMs - range.startMs;
  const byName = (a: FlapObject, b: FlapObject) =>
    `${a.key.cluster}/${a.key.namespace}/${a.key.name}`.localeCompare(`${b.key.cluster}/${b.key.namespace}/${b.key.name}`);
  return {
    windowMs,
    rangeMs,
    changes,
    flaps,
    flapChanges,
    flapsPerHour: rangeMs > 0 ? (flaps * 3_600_000) / rangeMs : 0,
    medianInStateMs: median(inState),
    objectsFlapping: objects.length,
    top: objects.sort((a, b) => b.flaps - a.flaps || byName(a, b)).slice(0, topN),
    byKind: [...kinds.values()].sort((a, b) => b.flaps - a.flaps || a.kind.localeCompare(b.kind)),
    steps,
  };
}

const fieldOf = (projection: string | undefined, field: string): string | undefined => {
  if (projection === undefined) return undefined;
  try {
    const value = (JSON.parse(projection) as Record<string, unknown>)[field];
    return typeof value === "string" ? value : undefined;
  } catch {
    return undefined;
  }
};

/** What the consumer would have seen of every run through the hold-down, up to `endMs`. */
export function holdDown(runs: readonly ChangeRun[], rule: HoldRule, endMs: number): HoldFigures {
  const out: HoldFigures = { rule, rebuildsWithout: 0, rebuildsWith: 0, absorbed: 0, delayed: 0, immediate: 0, stillHeld: 0 };
  for (const run of runs) {
    out.rebuildsWithout += run.changes.length;
    // What the consumer routes on, and the held change waiting (since when its value was first held).
    let seen = run.initial;
    let waiting: { projection: string; sinceMs: number } | undefined;
    const pass = (projection: string) => {
      if (projection === seen) return false;
      seen = projection;
      out.rebuildsWith++;
      return true;
    };
    for (const { tsMs, projection } of run.changes) {
      if (waiting && tsMs >= waiting.sinceMs + rule.holdMs) {
        if (pass(waiting.projection)) out.delayed++;
        waiting = undefined;
      }
      const held = fieldOf(projection, rule.field) === rule.value && fieldOf(seen, rule.field) !== rule.value;
      if (held) {
        // Still the held value: the hold counts from when it began.
        waiting = { projection, sinceMs: waiting?.sinceMs ?? tsMs };
        continue;
      }
      if (waiting) out.absorbed++;
      waiting = undefined;
      if (pass(projection)) out.immediate++;
    }
    if (waiting) {
      if (waiting.sinceMs + rule.holdMs <= endMs) {
        if (pass(waiting.projection)) out.delayed++;
      } else out.stillHeld++;
    }
  }
  return out;
}
