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

/** Text kept per name: a longer one is cut (a request's user agent or path may be anything). */
const MAX_NAME = 256;
const MAX_PATH = 128;
/** How much of a request URI is read for its query: a list's parameters come first in every client seen. */
const MAX_QUERY = 8_192;
const MINUTE_MS = 60_000;

/**
 * A name at most `max` long, its own copy: a slice of a longer text would keep all of that text alive for as long as the
 * name is kept (a request URI of megabytes, held by a tally's key), so a name cut from one is copied.
 */
const cut = (text: string, max: number) => (text.length > max ? Buffer.from(`${text.slice(0, max - 1)}…`).toString() : text);

/** A user agent's name and version, as the Clients view splits them. */
export function agentParts(userAgent: string): { agent: string; version: string } {
  const known = agents.get(userAgent);
  if (known) return known;
  const slash = userAgent.indexOf("/");
  let parts: { agent: string; version: string };
  if (slash < 0) parts = { agent: cut(userAgent, MAX_NAME), version: "" };
  else {
    const rest = userAgent.slice(slash + 1);
    const space = rest.indexOf(" ");
    parts = { agent: cut(userAgent.slice(0, slash), MAX_NAME), version: cut(space < 0 ? rest : rest.slice(0, space), 64) };
  }
  // A log has few user agents: each is split once (an explosion of them is let go of a thousand at a time).
  if (agents.size >= MAX_CACHED) agents.clear();
  agents.set(userAgent, parts);
  return parts;
}

const MAX_CACHED = 1_000;
const agents = new Map<string, { agent: string; version: string }>();
const minutes = new Map<string, number>();
/** `2026-11-28T10:05`: the minute of an RFC 3339 UTC time, its seconds and fraction left off. */
const MINUTE_PREFIX = /^\d{4}-\d\d-\d\dT\d\d:\d\d$/;

/** The start of the minute an RFC 3339 time falls in (NaN where it is not one); UTC times by their first 16 characters, each such minute parsed once. */
export function minuteOfTime(text: string): number {
  if (text.length < 17 || text.charCodeAt(text.length - 1) !== 0x5a /* Z */) return minuteOf(Date.parse(text));
  const prefix = text.slice(0, 16);
  const known = minutes.get(prefix);
  if (known !== undefined) return known;
  const minute = MINUTE_PREFIX.test(prefix) ? Date.parse(`${prefix}:00Z`) : minuteOf(Date.parse(text));
  if (minutes.size >= MAX_CACHED) minutes.clear();
  minutes.set(prefix, minute);
  return minute;
}

export function codeClass(code: number | undefined): CodeClass {
  if (typeof code !== "number" || code <= 0) return "none";
  if (code === 429) return "429";
  if (code < 300) return "2xx";
  if (code < 400) return "3xx";
  if (code < 500) return "4xx";
  return "5xx";
}

/** The query parameters a list's shape depends on. */
const LIST_PARAMS = new Set(["resourceVersion", "resourceVersionMatch", "continue", "limit", "labelSelector", "fieldSelector"]);

/**
 * A request URI's query parameters of LIST_PARAMS, read from its first bytes, as sent (undecoded): whether a value is
 * empty does not depend on its escapes, and the values read (a version match, a limit) need none.
 */
function queryOf(requestURI: string): Map<string, string> {
  const params = new Map<string, string>();
  const at = requestURI.indexOf("?");
  if (at < 0) return params;
  const end = Math.min(requestURI.length, at + 1 + MAX_QUERY);
  for (let start = at + 1; start < end;) {
    let amp = requestURI.indexOf("&", start);
    if (amp < 0 || amp > end) amp = end;
    const eq = requestURI.indexOf("=", start);
    const split = eq >= 0 && eq < amp ? eq : amp;
    const name = requestURI.slice(start, split);
    if (LIST_PARAMS.has(name) && !params.has(name)) params.set(name, split === amp ? "" : requestURI.slice(split + 1, amp));
    start = amp + 1;
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
  if (at === 0 || requestURI === "") return "/";
  if (at < 0) return cut(requestURI, MAX_PATH);
  const path = requestURI.slice(0, at);
  // Sliced from its URI, a path would keep the whole URI alive for as long as it is kept: copied.
  return path.length > MAX_PATH ? cut(path, MAX_PATH) : Buffer.from(path).toString();
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

/** A write request stored one by one, counted per client too. */
export function writeCall(request: AuditRequest): ApiCall {
  const { user, userAgent, verb, group, resource, subresource, namespace, code, tsMs, flow } = request;
  return {
    ...shapeOf({ user, userAgent, verb, target: targetOf(group, resource, subresource), namespaced: namespace !== "", code, flow }),
    minuteMs: minuteOf(tsMs),
  };
}

/** A call's dimensions as one text, for counting. */
export function callKey(c: ApiCall): string {
  return `${c.minuteMs}\u0001${c.user}\u0001${c.agent}/${c.version}\u0001${c.verb}\u0001${c.target}\u0001${flagsOf(c)}${c.code}${c.listFrom}\u0001${c.flowSchema}`;
}

/** Scope, pagination and selectors as one small number (1 a namespace, 2 a page, 4 a label selector, 8 a field selector), in keys and as stored. */
export const flagsOf = (c: { namespaced: boolean; paginated: boolean; selectors: number }) =>
  (c.namespaced ? 1 : 0) | (c.paginated ? 2 : 0) | (c.selectors << 2);
export const fromFlags = (flags: number) => ({ namespaced: (flags & 1) !== 0, paginated: (flags & 2) !== 0, selectors: flags >> 2 });

/** A call as counted and stored: its names cut to their bounds, its user agent split. */
function callOf(
  minuteMs: number,
  user: string,
  userAgent: string,
  verb: string,
  target: string,
  namespaced: boolean,
  code: CodeClass,
  listFrom: ListSource | "",
  paginated: boolean,
  selectors: number,
  flow: Flow | undefined,
): ApiCall {
  const { agent, version } = agentParts(userAgent);
  return {
    minuteMs,
    user: cut(user, MAX_NAME),
    agent,
    version,
    verb: cut(verb, 32),
    target: cut(target, MAX_NAME),
    namespaced,
    code,
    listFrom,
    paginated,
    selectors,
    flowSchema: flow?.flowSchema ?? "",
    priorityLevel: flow?.priorityLevel ?? "",
  };
}

/** Whether an event is counted: every request at its completion, and a watch at its start (ResponseStarted) and end. */
export function isCounted(event: AuditEvent): boolean {
  const stage = event.stage;
  return stage === "ResponseComplete" || stage === "Panic" || (stage === "ResponseStarted" && event.verb === "watch");
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

  /**
   * Counts an event that is not a write stored one by one (isCounted says whether it counts): its call at its
   * completion, a watch's start at ResponseStarted and its end at ResponseComplete. Its fields are read once and keyed
   * as they are: the call itself is made only the first time its key is seen (most of a log's reads repeat one).
   * false where the event says too little (no time; a watch without its auditID).
   */
  count(event: AuditEvent, schemas: readonly FlowSchema[], lineNo: number): boolean {
    const verb = str(event.verb);
    const watch = verb === "watch";
    const receivedText = str(event.requestReceivedTimestamp) || str(event.timestamp) || str(event.stageTimestamp);
    const minuteMs = minuteOfTime(receivedText);
    if (Number.isNaN(minuteMs)) return false;
    const ref = isObject(event.objectRef) ? event.objectRef : undefined;
    const uri = str(event.requestURI);
    const resource = ref ? str(ref.resource) : "";
    const target = resource === "" ? nonResourcePath(uri) : targetOf(str(ref?.apiGroup), resource, str(ref?.subresource));
    const list = resource !== "" && (verb === "list" || watch) ? listShape(uri) : undefined;
    const flow = flowOf(event, schemas);
    const user = str(event.user?.username) || "unknown";
    const userAgent = str(event.userAgent);
    const code = codeClass(event.responseStatus?.code);
    const namespaced = ref !== undefined && str(ref.namespace) !== "";
    const listFrom = verb === "list" && list ? list.listFrom : "";
    const paginated = verb === "list" && list !== undefined && list.paginated;
    const selectors = list?.selectors ?? 0;
    this.throughLine = Math.max(this.throughLine, lineNo);
    if (!watch) {
      const key = `${minuteMs}\u0001${user}\u0001${userAgent}\u0001${verb}\u0001${target}\u0001${flagsOf({ namespaced, paginated, selectors })}${code}${listFrom}\u0001${flow?.flowSchema ?? ""}`;
      const seen = this.counts.get(key);
      this.calls++;
      if (seen) seen.n++;
      else this.counts.set(key, { call: callOf(minuteMs, user, userAgent, verb, target, namespaced, code, listFrom, paginated, selectors, flow), n: 1 });
      return true;
    }
    const auditId = str(event.auditID);
    if (auditId === "") return false;
    const call = callOf(minuteMs, user, userAgent, verb, target, namespaced, code, listFrom, paginated, selectors, flow);
    // A watch's times to the millisecond: how long it lived.
    const startMs = Date.parse(receivedText);
    if (event.stage === "ResponseStarted") this.watches.push({ auditId, call, startMs });
    else {
      const ended = Date.parse(str(event.stageTimestamp));
      this.watches.push({ auditId, call, startMs, endMs: Number.isNaN(ended) ? startMs : Math.max(startMs, ended) });
    }
    return true;
  }

  /** counted by another thread's tally, each of its keys once: kept as they came (the store adds up rows of one key) */
  private absorbed: { call: ApiCall; n: number }[] = [];

  get size(): number {
    return this.counts.size + this.absorbed.length + this.watches.length;
  }

  /** Adds another tally's counts (one read in another thread, which sends many chunks' counts at once). */
  absorb(other: TallyData): void {
    for (const c of other.counts) this.absorbed.push(c);
    for (const w of other.watches) this.watches.push(w);
    this.throughLine = Math.max(this.throughLine, other.throughLine);
  }

  /** What was counted, as plain data that crosses a thread, leaving this tally empty. */
  take(): TallyData {
    const data: TallyData = { counts: [...this.counts.values(), ...this.absorbed], watches: this.watches, throughLine: this.throughLine };
    this.counts.clear();
    this.absorbed = [];
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
