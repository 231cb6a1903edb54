/**
 * The snapshot bundle: a view's data for a time range, frozen so that it opens without Prometheus
 * or cluster access. Versioned; stored and shared as gzip-compressed JSON.
 */
import { z } from "zod";
import { NOOP_EVIDENCE, type NoopEvidence } from "../../churn/preconditions";
import { WRITE_CLASSES, type WriteClass } from "../../churn/write-class";
import { firstWrong, isEpochMs, isIndex, isInt, isOptional, isString, recordsSchema, unknownField, wrong, type Check, type Wrong } from "./records";

export const SNAPSHOT_FORMAT = "churnscope-snapshot";
export const SNAPSHOT_VERSION = 1;

const finite = z.number().finite();
const epochMs = z.number().int().min(0).max(8.64e15);

const isPoint = (p: unknown) =>
  Array.isArray(p) &&
  p.length === 2 &&
  Number.isInteger(p[0]) &&
  p[0] >= 0 &&
  p[0] <= 8.64e15 &&
  (p[1] === null || (typeof p[1] === "number" && Number.isFinite(p[1])));

/**
 * A chart's points, each [epoch ms, a finite number or null]: checked in one loop, as a bundle holds hundreds of
 * thousands (the replay 592,697) and a schema per point took two thirds of checking one.
 */
const pointsSchema = z.custom<[number, number | null][]>((points) => Array.isArray(points) && points.every(isPoint), {
  message: "each point is [epoch ms, a finite number or null]",
});

const seriesSchema = z.strictObject({
  labels: z.record(z.string(), z.string()),
  points: pointsSchema,
});

export const panelResultSchema = z.strictObject({
  data: z.strictObject({
    panel: z.string().max(64),
    title: z.string().max(200),
    unit: z.string().max(32),
    query: z.string().max(20_000),
    queries: z.array(z.strictObject({ name: z.string().max(100).optional(), promql: z.string().max(20_000) })),
    stepSeconds: finite.positive(),
    startMs: epochMs,
    endMs: epochMs,
    series: z.array(seriesSchema),
    estimate: z.string().max(2_000).optional(),
    profile: z.strictObject({ id: z.string().max(64), title: z.string().max(200), reason: z.string().max(2_000) }).optional(),
    thresholds: z.array(z.strictObject({ value: finite, label: z.string().max(200) })).optional(),
    nothingToDraw: z.literal(true).optional(),
  }),
  warnings: z.array(z.string().max(2_000)),
  infos: z.array(z.string().max(2_000)),
});

export const panelEntrySchema = z.strictObject({
  panel: z.string().max(64),
  startMs: epochMs,
  endMs: epochMs,
  apiserver: z.string().max(253).optional(),
  resource: z.string().max(253).optional(),
  args: z.record(z.string().max(64), z.string().max(2_000)).optional(),
  result: panelResultSchema,
});

export const markerSchema = z.strictObject({
  timeMs: epochMs,
  label: z.string().max(200),
  detail: z.string().max(2_000),
  kind: z.enum(["release", "note", "query", "change"]),
});

export interface FieldChange {
  path: string;
  before?: unknown;
  after?: unknown;
}

export interface ObjectWrite {
  t: number;
  /** index into objects */
  o: number;
  verb: string;
  sub?: string;
  by: string;
  cls: WriteClass;
  changes: FieldChange[];
  /** what the write's versions said beyond its class (churn/conditions.ts), as stored: some of them (an echo) only the source saw */
  tr?: string;
}

const WRITE_CLASS_SET = new Set<string>(WRITE_CLASSES);
const NOOP_EVIDENCE_SET = new Set<string>(NOOP_EVIDENCE);

const CHANGE_FIELDS = new Set(["path", "before", "after"]);
const WRITE_FIELDS = new Set(["t", "o", "verb", "sub", "by", "cls", "changes", "tr"]);
const REQUEST_FIELDS = new Set(["t", "c", "x", "verb", "sub", "code", "noop", "ev"]);

const checkChange: Check = (c) =>
  unknownField(c, CHANGE_FIELDS) ?? (isString(c.path, 1_000) ? undefined : wrong("path", "a string of at most 1000 characters"));

function checkWrite(w: Record<string, unknown>): Wrong | undefined {
  const unknown = unknownField(w, WRITE_FIELDS);
  if (unknown) return unknown;
  if (!isEpochMs(w.t)) return wrong("t", "epoch milliseconds");
  if (!isIndex(w.o)) return wrong("o", "an index");
  if (!isString(w.verb, 32)) return wrong("verb", "a string of at most 32 characters");
  if (!isOptional(w.sub, (v) => isString(v, 64))) return wrong("sub", "a string of at most 64 characters");
  if (!isString(w.by, 253)) return wrong("by", "a string of at most 253 characters");
  if (typeof w.cls !== "string" || !WRITE_CLASS_SET.has(w.cls)) return wrong("cls", `one of ${WRITE_CLASSES.join(", ")}`);
  if (!isOptional(w.tr, (v) => isString(v, 1_000))) return wrong("tr", "a string of at most 1000 characters");
  const change = firstWrong(w.changes, checkChange);
  return change && { wrong: ["changes", ...change.wrong], message: change.message };
}

function checkRequest(r: Record<string, unknown>): Wrong | undefined {
  const unknown = unknownField(r, REQUEST_FIELDS);
  if (unknown) return unknown;
  if (!isEpochMs(r.t)) return wrong("t", "epoch milliseconds");
  if (!isIndex(r.c)) return wrong("c", "an index");
  if (!isIndex(r.x)) return wrong("x", "an index");
  if (!isString(r.verb, 32)) return wrong("verb", "a string of at most 32 characters");
  if (!isOptional(r.sub, (v) => isString(v, 64))) return wrong("sub", "a string of at most 64 characters");
  if (!isInt(r.code, 0, 999)) return wrong("code", "an HTTP status code");
  if (!isOptional(r.noop, (v) => typeof v === "boolean")) return wrong("noop", "true or false");
  if (r.ev !== undefined && (typeof r.ev !== "string" || !NOOP_EVIDENCE_SET.has(r.ev))) return wrong("ev", `one of ${NOOP_EVIDENCE.join(", ")}`);
  return undefined;
}

export const objectWritesSchema = z.strictObject({
  objects: z.array(
    z.strictObject({
      cluster: z.string().max(253),
      apiVersion: z.string().max(253),
      kind: z.string().max(253),
      namespace: z.string().max(253),
      name: z.string().max(253),
      /** the object at the start of the range; null when it was created inside it */
      initial: z.unknown(),
    }),
  ),
  writes: recordsSchema<ObjectWrite>(checkWrite),
});

export interface AuditRequest {
  t: number;
  /** index into clients */
  c: number;
  /** index into targets */
  x: number;
  /** the Kubernetes verb: create, update, patch, delete */
  verb: string;
  sub?: string;
  code: number;
  /** whether the write changed nothing; absent where it is not known (a failed request) */
  noop?: boolean;
  /** what `noop` rests on; absent: the logged bodies or the API server's answer, which of the two not kept */
  ev?: NoopEvidence;
}

/** The audit view of the snapshot's writes (the Clients page): each completed write request and who made it. */
export const auditRequestsSchema = z.strictObject({
  /** what the requests cover, said on the Clients page */
  note: z.string().max(2_000).optional(),
  clients: z.array(z.strictObject({ user: z.string().max(512), userAgent: z.string().max(1_024) })),
  /** the objects written: resource (plural) and group, as the audit log names them */
  targets: z.array(
    z.strictObject({
      cluster: z.string().max(253),
      group: z.string().max(253),
      resource: z.string().max(253),
      namespace: z.string().max(253),
      name: z.string().max(253),
    }),
  ),
  requests: recordsSchema<AuditRequest>(checkRequest),
});

/**
 * Every API call the audit logs held in the range, counted per minute and shape (the API cost view), each name listed
 * once. A row: [minute, cluster, client, version, verb, target, shape, flow, calls], names as indexes into `names` (a
 * client is the JSON of its user and agent, a flow of its FlowSchema and priority level), shape as the store keeps it
 * (lib/store/api-calls.ts: flags, answer class, list source); a watch's end: [minute, cluster, client, version,
 * target, namespaced, lifetimeMs].
 */
export const apiCallsSchema = z.strictObject({
  names: z.array(z.string().max(1_100)),
  rows: z.array(z.array(z.number().int().min(0).max(8.64e15)).length(9)),
  watchEnds: z.array(z.array(z.number().int().min(0).max(8.64e15)).length(7)),
});

/** The pages a snapshot can open on. */
export const SNAPSHOT_PAGES = ["/", "/rebuilds", "/compare", "/objects", "/objects/lanes", "/fields", "/clients"] as const;

export const snapshotSchema = z.strictObject({
  format: z.literal(SNAPSHOT_FORMAT),
  version: z.literal(SNAPSHOT_VERSION),
  title: z.string().max(300),
  description: z.string().max(5_000).optional(),
  takenAtMs: epochMs,
  source: z.enum(["prometheus", "replay", "recorder"]),
  views: z.array(z.enum(["write-load", "rebuilds", "compare", "objects"])).min(1),
  /** the label that told edge sites apart where the snapshot was taken */
  siteLabel: z.string().max(100).optional(),
  ranges: z.array(z.strictObject({ startMs: epochMs, endMs: epochMs, label: z.string().max(100).optional() })).min(1),
  /** the view a bare link opens with: the range and selection it was downloaded from */
  initialView: z
    .object({
      range: z.strictObject({ startMs: epochMs, endMs: epochMs }).optional(),
      apiserver: z.string().max(253).optional(),
      resource: z.string().max(253).optional(),
      site: z.string().max(253).optional(),
      /** the page it was downloaded from, where opening it lands */
      page: z.enum(SNAPSHOT_PAGES).optional(),
      /** the object views' scope */
      cluster: z.string().max(253).optional(),
      group: z.string().max(253).optional(),
      kind: z.string().max(253).optional(),
      namespace: z.string().max(253).optional(),
      atMs: epochMs.optional(),
    })
    .optional(),
  apiservers: z.array(z.strictObject({ job: z.string().max(253), role: z.enum(["project", "hub", "discovered"]) })),
  panels: z.array(panelEntrySchema),
  markers: z.array(markerSchema),
  objectWrites: objectWritesSchema.nullable(),
  /** absent in snapshots taken before they carried audit requests, and where none were ingested */
  auditRequests: auditRequestsSchema.optional(),
  /** absent in snapshots taken before they carried every API call, and where none were counted */
  apiCalls: apiCallsSchema.optional(),
});

export type Snapshot = z.infer<typeof snapshotSchema>;
export type PanelEntry = z.infer<typeof panelEntrySchema>;
export type SnapshotMarker = z.infer<typeof markerSchema>;
export type ObjectWrites = z.infer<typeof objectWritesSchema>;
export type AuditRequests = z.infer<typeof auditRequestsSchema>;
export type ApiCallsBundle = z.infer<typeof apiCallsSchema>;

/** What the browser needs to show a snapshot: everything but the bulky data. */
export interface SnapshotInfo {
  id: string;
  title: string;
  description?: string;
  takenAtMs: number;
  source: Snapshot["source"];
  views: Snapshot["views"];
  siteLabel?: string;
  ranges: Snapshot["ranges"];
  initialView?: Snapshot["initialView"];
  apiservers: Snapshot["apiservers"];
  /** resources with a drill-down, per API server ("" = all) */
  resources: Record<string, string[]>;
  markers: SnapshotMarker[];
  /** the compare view's counter pairs it holds */
  comparisons: { a: string; b: string; window: string }[];
  /** the panels it holds answers of, by id */
  panels: string[];
  objectWriteCount: number;
  /** audit requests it carries, for the Clients page */
  auditRequestCount: number;
  /** API calls it carries (counted rows), for the Clients page's API cost */
  apiCallRows: number;
}

/** A snapshot bundle this dashboard keeps, as a link to one it does not hold offers it. */
export interface KeptBundle {
  id: string;
  storedMs: number;
}
