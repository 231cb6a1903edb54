/** What the object views receive (/api/objects, /api/fields): declared once for the server and the browser. */
import type { PeriodicPattern } from "../analysis/periodic";
import type { WriteClass } from "../churn/write-class";
import type { NoopEvidence } from "../churn/preconditions";
import type { FieldChange } from "../churn/diff";
import type { RecordedChange } from "../churn/changes";
import type { WriteTraits } from "../churn/conditions";
import type { Json } from "../churn/json";
import type { ObjectTimeline, TimelineSegment } from "../objects/timeline";

export interface ObjectKey {
  cluster: string;
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

/** What the Objects ranking can be sorted by, most first (name: A to Z). */
export const OBJECT_SORTS = ["writes", "routed", "unrouted", "noop", "create", "delete", "wasted", "name"] as const;
export type ObjectSort = (typeof OBJECT_SORTS)[number];

export interface ObjectRow extends ObjectKey {
  writes: number;
  create: number;
  delete: number;
  routed: number;
  unrouted: number;
  noop: number;
  /** audit writes logged without bodies: counted, not classified */
  unknown: number;
  heartbeat: number;
  /** (no-op + unrouted) / all writes */
  wastedRatio: number;
  topFields: { path: string; changes: number }[];
  writers: { writer: string; writes: number }[];
  /** writes per equal slice of the range */
  sparkline: number[];
  /** the same object re-sent on a timer with nothing changed (the HTTPRoute status-patch fix) */
  periodicNoop: PeriodicPattern | null;
}

export interface FieldRow {
  path: string;
  changes: number;
  objects: number;
  /** changes made by writes that changed what consumers route on */
  routed: number;
  /** changes made by writes that left what consumers route on as it was */
  unrouted: number;
  writers: { writer: string; changes: number }[];
  /** changes per equal slice of the range */
  sparkline: number[];
}

export interface ObjectsAnswer {
  total: number;
  /** objects left out because every write of theirs is a heartbeat (Lease renewals), and their writes */
  heartbeatOnly: { objects: number; writes: number };
  sort: string;
  page: number;
  pageSize: number;
  startMs: number;
  endMs: number;
  rows: ObjectRow[];
  kinds: { cluster: string; group: string; kind: string }[];
}

export interface StoredWrite {
  tsMs: number;
  cls: WriteClass;
  writer: string;
  source: "watch" | "audit" | "replay";
  heartbeat: boolean;
  changes: FieldChange[];
  projection: Record<string, string>;
  resourceVersion?: string;
  /** a watched write's: the version it directly followed (a watch delivers every version; a relist does not) */
  previousVersion?: string;
  /** the whole object: created (create) or last seen alive (delete); lets a range be exported with every version rebuilt */
  body?: Json;
  /** what the audit log says about the request (audit writes, and watched writes an audit event matched) */
  request?: WriteRequest;
  /** the workload or GitOps change the write made, when its profile records changes (churn/changes.ts) */
  change?: RecordedChange;
  /** an echo (answered with the version the object had), and what it did to condition clocks (churn/conditions.ts) */
  traits?: WriteTraits;
}

/** Only routed writes, or only writes marked with traits (an echo, a clock-only write, a condition clock fault). */
export type PickOnly = "routed" | "marked";

export interface WriteRequest {
  verb: string;
  subresource: string;
  userAgent: string;
  /** HTTP status, 0 when unknown */
  code: number;
  latencyMs: number | null;
}

/** One write as the API answers it (the class under its own name). */
export type ApiWrite = Omit<StoredWrite, "cls"> & { seq: number; class: StoredWrite["cls"] };

export interface ObjectHistory {
  key: ObjectKey;
  /** the version a first list found, when the recorder kept it */
  firstSeen?: { tsMs: number; body: Json };
  writes: { tsMs: number; cls: WriteClass; writer: string; changes: FieldChange[]; body?: Json; traits?: WriteTraits }[];
}

/** /api/objects/{object path}/writes: one object's writes in a range, oldest first. */
export interface ObjectWritesAnswer {
  key: ObjectKey;
  startMs: number;
  endMs: number;
  /** what consumers routed on when the range began, where known */
  initialProjection?: Record<string, string>;
  writes: ApiWrite[];
  truncated: boolean;
}

/** /api/objects/{object path}/timeline: every write in a range counted per pixel column. */
export type ObjectTimelineAnswer = ObjectTimeline & { key: ObjectKey };

/** /api/objects/{object path}/write: one write in full, which of the range's writes it is, and its neighbours. */
export interface PickedWriteAnswer {
  write: ApiWrite;
  /** from its audit request, when it has one: whether it changed anything, and what that rests on (null: not kept) */
  audited?: { noop: boolean | null; evidence: NoopEvidence | null };
  index: number;
  total: number;
  previousSeq: number | null;
  nextSeq: number | null;
}

/** /api/fields: the changed fields of the objects in scope, and every kind the store has (for the selectors). */
export interface FieldsAnswer {
  startMs: number;
  endMs: number;
  rows: FieldRow[];
  kinds: { cluster: string; group: string; kind: string }[];
}

/** One object's lane on the many-objects view: its counts, its routed projection over the range, and its transitions. */
export interface ObjectLane extends ObjectKey {
  writes: number;
  routed: number;
  wastedRatio: number;
  segments: TimelineSegment[];
  /** routed writes (the projection's transitions) per pixel column: [column, count] */
  transitions: [number, number][];
}

/**
 * /api/objects/lanes: one page of a scope's objects as lanes on one time axis: the written ones in the Objects ranking's
 * order, then the quiet ones (there when the range began, not written in it) by name.
 */
export interface ObjectLanesAnswer {
  total: number;
  /** how many of them were written in the range (they come first) */
  written: number;
  heartbeatOnly: { objects: number; writes: number };
  sort: ObjectSort;
  page: number;
  pageSize: number;
  startMs: number;
  endMs: number;
  columns: number;
  lanes: ObjectLane[];
  kinds: { cluster: string; group: string; kind: string }[];
}
