/** What the condition-clock and echo report (Objects, Field churn, Clients) receives from /api/objects/traits: declared once for the server and the browser. */
import type { FlapFigures, HoldFigures } from "../analysis/flaps";
import type { ClockFinding } from "../churn/conditions";
import type { ObjectKey } from "./objects";

/** A write to open on its object's timeline (`write=seq`). */
export interface ExampleWrite {
  key: ObjectKey;
  seq: number;
}

/** Writes of one writer that left one condition's clock wrong in one way, on one kind. */
export interface ClockRow {
  group: string;
  kind: string;
  conditionType: string;
  finding: ClockFinding;
  writer: string;
  writes: number;
  objects: number;
  example: ExampleWrite | null;
}

/** What one writer's writes that changed nothing, or only clocks, were. */
export interface EchoRow {
  writer: string;
  /** answered with the version the object already had: nothing was written (only an audit log sees these) */
  echoes: number;
  /** a new version that differs only in conditions' lastTransitionTime */
  clockOnly: number;
  /** no-op writes that are neither: what changed is only what the kind's profile ignores */
  ignoredOnly: number;
  /** of these, the class no-op (echoes, ignored-only, and clock-only writes whose profile ignores clocks) */
  noop: number;
  objects: number;
  example: ExampleWrite | null;
}

export interface TraitsAnswer {
  startMs: number;
  endMs: number;
  clocks: ClockRow[];
  writers: EchoRow[];
  /** one sentence per kind and condition type whose clocks cannot be trusted, the worst first */
  sentences: string[];
}

/** /api/objects/flaps: routed changes that undid themselves within the window, and the damping what-if. */
export interface FlapsAnswer {
  startMs: number;
  endMs: number;
  flaps: FlapFigures;
  /** the hold-down replayed over the same changes; null when the scope's projections have no such field */
  hold: HoldFigures | null;
  /** the projection fields the scope's changes carry, for the hold's field picker */
  fields: string[];
}
