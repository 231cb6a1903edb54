/**
 * Every API request, reads and watches included, as Churnscope counts it: not a row per request but a count per
 * minute of who called (user and user agent), how (verb, where a list was served from, pagination, selectors), on what
 * (resource or non-resource path) and with what answer (status class). Watches also count how long each lived.
 * Pure: no I/O, no store (lib/store/api-calls.ts stores the tallies).
 */
import { matchFlowSchema, type FlowSchema } from "../churn/flow-schemas";
import type { CallCount, CodeClass, ListSource } from "../wire/api-cost";
import type { AuditEvent, AuditRequest } from "./event";

/** Selectors a list or watch carried, as bits: 1 a label selector, 2 a field selector. */
export const LABEL_SELECTOR = 1;
export const FIELD_SELECTOR = 2;

/**
 * The dimensions a call is counted by (its minute apart): who (user; the user agent's name, without its version:
 * `kube-controller-manager/v1.31.0 (linux/amd64) …` → `kube-controller-manager`; and that version, "" where it names
 * none), the verb, on what, whether it named a namespace, its answer's class, and a list's shape.
 */
export type CallShape = Omit<CallCount, "calls">;

export interface ApiCall extends CallShape {
  /** the start of the minute the request was received in */
  minuteMs: number;
}

/** A watch's start (its ResponseStarted stage) or end (ResponseComplete: with when it began and ended). */
export interface WatchStage {
  auditId: string;
  /** the watch, counted in the minute it was received */
  call: ApiCall;
  startMs: number;
  /** set on the end */
  endMs?: number;
}

/** What one audit event counts as: a call, or a watch's start or end (counted apart, as they pair across batches). */
export type CountedEvent = { kind: "call"; call: ApiCall } | { kind: "watch"; stage: WatchStage };

/** Text kept per name: a longer one is cut (a request's user agent or path may be anything). */
const MAX_NAME = 256;
const MAX_PATH = 128;
/** How much of a request URI is read for its query: a list's parameters come first in every client seen. */
const MAX_QUERY = 8_192;
const MINUTE_MS = 60_000;

const cut = (text: string, max: number) => (text.length > max ? `${text.slice(0, max - 1)}…` : text);

/** A user agent's name and version, as the Clients view splits them. */
export function agentParts(userAgent: string): { agent: string; version: string } {
  const slash = userAgent.indexOf("/");
  if (slash < 0) return { agent: cut(userAgent, MAX_NAME), version: "" };
  const rest = userAgent.slice(slash + 1);
  const space = rest.indexOf(" ");
  return { agent: cut(userAgent.slice(0, slash), MAX_NAME), version: cut(space < 0 ? rest : rest.slice(0, space), 64) };
}

export function codeClass(code: number | undefined): CodeClass {
  if (typeof code !== "number" || code <= 0) return "none";
  if (code === 429) return "429";
  if (code < 300) return "2xx";
  if (code < 400) return "3xx";
  if (code < 500) return "4xx";
  return "5xx";
}

/** A request URI's query parameters, read from its first bytes; a value that does not decode counts as present. */
function queryOf(requestURI: string): Map<string, string> {
  const params = new Map<string, string>();
  const at = requestURI.indexOf("?");
  if (at < 0) return params;
  for (const pair of requestURI.slice(at + 1, at + 1 + MAX_QUERY).split("&")) {
    const eq = pair.indexOf("=");
    const name = eq < 0 ? pair : pair.slice(0, eq);
    const raw = eq < 0 ? "" : pair.slice(eq + 1);
    let value = raw;
    try {
      value = decodeURIComponent(raw.replace(/\+/g, " "));
    } catch {
      // a malformed escape: the parameter is there, its value unread
    }
    if (name !== "" && !params.has(name)) params.set(name, value);
  }
  return params;
}

/** How a list was asked for: where it is served from, whether it asked for a page, which selectors it carried. */
export function listShape(requestURI: string): { listFrom: ListSource; paginated: boolean; selectors: number } {
  const q = queryOf(requestURI);
  const rv = q.get("resourceVersion") ?? "";
  const match = q.get("resourceVersionMatch") ?? "";
  // A version the answer may be newer than ("0", or any with NotOlderThan, the default) is served from the watch cache.
  const listFrom: ListSource = (q.get("continue") ?? "") !== "" ? "continue" : match === "Exact" ? "exact" : rv !== "" ? "cache" : "consistent";
  const limit = Number(q.get("limit") ?? "0");
  return { listFrom, paginated: Number.isFinite(limit) && limit > 0, selectors: selectorsOf(q) };
}

function selectorsOf(q: Map<string, string>): number {
  return ((q.get("labelSelector") ?? "") !== "" ? LABEL_SELECTOR : 0) | ((q.get("fieldSelector") ?? "") !== "" ? FIELD_SELECTOR : 0);
}

/** A non-resource request's path, without its query, cut to a bounded length (a path may be anything a client sent). */
export function nonResourcePath(requestURI: string): string {
  const at = requestURI.search(/[?#]/);
  const path = at < 0 ? requestURI : requestURI.slice(0, at);
  return cut(path === "" ? "/" : path, MAX_PATH);
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");
const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/** `resource[.group][/subresource]`, as Write load and Clients name what a request was on. */
export function targetOf(group: string, resource: string, subresource: string): string {
  return `${group === "" ? resource : `${resource}.${group}`}${subresource === "" ? "" : `/${subresource}`}`;
}

/** The minute a time falls in. */
export const minuteOf = (tsMs: number) => Math.floor(tsMs / MINUTE_MS) * MINUTE_MS;

/** The dimensions shared by every call: who, on what, with what answer, in which FlowSchema. */
export function shapeOf(fields: {
  user: string;
  userAgent: string;
  verb: string;
  target: string;
  namespaced: boolean;
  code: number | undefined;
  flow?: Flow;
}): CallShape {
  return {
    user: cut(fields.user || "unknown", MAX_NAME),
    ...agentParts(fields.userAgent),
    verb: cut(fields.verb, 32),
    target: cut(fields.target, MAX_NAME),
    namespaced: fields.namespaced,
    code: codeClass(fields.code),
    listFrom: "",
    paginated: false,
    selectors: 0,
    flowSchema: fields.flow?.flowSchema ?? "",
    priorityLevel: fields.flow?.priorityLevel ?? "",
  };
}

/** Which FlowSchema took a request, and its priority level ("" where none matched, or none is known). */
export interface Flow {
  flowSchema: string;
  priorityLevel: string;
}

/** The FlowSchema (of those recorded, in matching order) that takes an event's request. */
export function flowOf(event: AuditEvent, schemas: readonly FlowSchema[]): Flow | undefined {
  if (schemas.length === 0) return undefined;
  const ref = isObject(event.objectRef) ? event.objectRef : undefined;
  const resource = ref ? str(ref.resource) : "";
  const match = matchFlowSchema(schemas, {
    user: str(event.user?.username),
    groups: Array.isArray(event.user?.groups) ? event.user.groups.filter((g): g is string => typeof g === "string") : [],
    verb: str(event.verb),
    apiGroup: ref ? str(ref.apiGroup) : "",
    resource,
    subresource: ref ? str(ref.subresource) : "",
    namespace: ref ? str(ref.namespace) : "",
    path: resource === "" ? nonResourcePath(str(event.requestURI)) : "",
  });
  return match ? { flowSchema: match.name, priorityLevel: match.priorityLevel } : undefined;
}

/**
 * What an event that is not a stored write request counts as: its call at its completion (ResponseComplete or
 * Panic), a watch's start at ResponseStarted and its end at ResponseComplete; null at any other stage, or where the
 * event says too little (no time, no auditID).
 */
export function countedEvent(event: AuditEvent, schemas: readonly FlowSchema[] = []): CountedEvent | null {
  const stage = str(event.stage);
  const verb = str(event.verb);
  const watch = verb === "watch";
  const completed = stage === "ResponseComplete" || stage === "Panic";
  if (!completed && !(watch && stage === "ResponseStarted")) return null;
  const received = Date.parse(str(event.requestReceivedTimestamp) || str(event.timestamp) || str(event.stageTimestamp));
  if (Number.isNaN(received)) return null;
  const ref = isObject(event.objectRef) ? event.objectRef : undefined;
  const uri = str(event.requestURI);
  const resource = ref ? str(ref.resource) : "";
  const shape = shapeOf({
    user: str(event.user?.username),
    userAgent: str(event.userAgent),
    verb,
    target: resource === "" ? nonResourcePath(uri) : targetOf(str(ref?.apiGroup), resource, str(ref?.subresource)),
    namespaced: ref !== undefined && str(ref.namespace) !== "",
    code: event.responseStatus?.code,
    flow: flowOf(event, schemas),
  });
  if (resource !== "" && (verb === "list" || watch)) {
    const list = listShape(uri);
    shape.selectors = list.selectors;
    if (verb === "list") Object.assign(shape, { listFrom: list.listFrom, paginated: list.paginated });
  }
  const call: ApiCall = { ...shape, minuteMs: minuteOf(received) };
  if (!watch) return { kind: "call", call };
  const auditId = str(event.auditID);
  if (auditId === "") return null;
  if (!completed) return { kind: "watch", stage: { auditId, call, startMs: received } };
  const ended = Date.parse(str(event.stageTimestamp));
  return { kind: "watch", stage: { auditId, call, startMs: received, endMs: Number.isNaN(ended) ? received : Math.max(received, ended) } };
}

/** A write request stored one by one, counted per client too. */
export function writeCall(request: AuditRequest): ApiCall {
  const { user, userAgent, verb, group, resource, subresource, namespace, code, tsMs, flow } = request;
  const shape = shapeOf({ user, userAgent, verb, target: targetOf(group, resource, subresource), namespaced: namespace !== "", code, flow });
  return { ...shape, minuteMs: minuteOf(tsMs) };
}

/** A call's dimensions as one text, for counting. */
export function callKey(c: ApiCall): string {
  return `${c.minuteMs}\u0000${c.user}\u0000${c.agent}\u0000${c.version}\u0000${c.verb}\u0000${c.target}\u0000${c.namespaced ? 1 : 0}\u0000${c.code}\u0000${c.listFrom}\u0000${c.paginated ? 1 : 0}\u0000${c.selectors}\u0000${c.flowSchema}\u0000${c.priorityLevel}`;
}

/**
 * Calls counted since the last `take`, and the watch stages seen, of one source's lines: what one transaction stores.
 * `throughLine`: the last line of the source counted (the store keeps it, so the same log read again counts nothing twice).
 */
export class CallTally {
  readonly counts = new Map<string, { call: ApiCall; n: number }>();
  watches: WatchStage[] = [];
  calls = 0;
  throughLine = 0;

  add(call: ApiCall, n = 1): void {
    const key = callKey(call);
    const seen = this.counts.get(key);
    if (seen) seen.n += n;
    else this.counts.set(key, { call, n });
    this.calls += n;
  }

  get size(): number {
    return this.counts.size + this.watches.length;
  }

  /** Adds another tally's counts (one read in another thread). */
  absorb(other: TallyData): void {
    for (const { call, n } of other.counts) this.add(call, n);
    for (const w of other.watches) this.watches.push(w);
    this.throughLine = Math.max(this.throughLine, other.throughLine);
  }

  /** What was counted, as plain data that crosses a thread, leaving this tally empty. */
  take(): TallyData {
    const data: TallyData = { counts: [...this.counts.values()], watches: this.watches, throughLine: this.throughLine };
    this.counts.clear();
    this.watches = [];
    this.calls = 0;
    return data;
  }
}

export interface TallyData {
  counts: { call: ApiCall; n: number }[];
  watches: WatchStage[];
  throughLine: number;
}
