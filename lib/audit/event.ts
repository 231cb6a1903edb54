/**
 * Audit log lines → completed write requests. Reads audit.k8s.io/v1 and v1beta1 Events as the
 * kube-apiserver writes them (one JSON object per line), inside common log envelopes too, and says
 * why every other line was not one. Pure: no I/O, no store.
 */
import type { Json } from "../churn/json";
import type { RequestRecord } from "../store/types";

/** The fields of an audit Event that Churnscope reads (audit.k8s.io/v1; v1beta1 adds `timestamp`). */
export interface AuditEvent {
  kind?: string;
  apiVersion?: string;
  level?: string;
  auditID?: string;
  stage?: string;
  verb?: string;
  requestURI?: string;
  user?: { username?: string; groups?: string[] };
  userAgent?: string;
  objectRef?: {
    resource?: string;
    namespace?: string;
    name?: string;
    apiGroup?: string;
    apiVersion?: string;
    subresource?: string;
    /** the request object's metadata.resourceVersion, at every level: an update's precondition */
    resourceVersion?: string;
  };
  responseStatus?: { code?: number };
  requestObject?: Json;
  responseObject?: Json;
  requestReceivedTimestamp?: string;
  stageTimestamp?: string;
  /** v1beta1's legacy event time */
  timestamp?: string;
}

/** One completed write request, as the store and the views read it. */
export interface AuditRequest extends RequestRecord {
  /** the object after the write, when the log level kept bodies (RequestResponse) */
  response?: AuditResponse;
  /** the FlowSchema that took it, where FlowSchemas are recorded (counted per client with it) */
  flow?: { flowSchema: string; priorityLevel: string };
}

/**
 * What the ingester reads first from a response (its resourceVersion and labels) and the object
 * itself, which it reads only when that version is new. Across a thread the object travels as JSON
 * text (`json`) and is parsed on demand (responseBody).
 */
export interface AuditResponse {
  /** a subresource may answer with another kind than its object's (a Scale) */
  kind?: string;
  resourceVersion?: string;
  labels?: Record<string, string>;
  object?: Json;
  json?: string;
}

export function responseBody(response: AuditResponse): Json | undefined {
  if (response.object === undefined && response.json !== undefined) {
    response.object = JSON.parse(response.json) as Json;
    response.json = undefined;
  }
  return response.object;
}

export const WRITE_VERBS = new Set(["create", "update", "patch", "delete", "deletecollection"]);
const COMPLETED_STAGES = new Set(["ResponseComplete", "Panic"]);

export type LineOutcome =
  | { kind: "events"; events: AuditEvent[] }
  /** recognised from the line's head and skipped without parsing (not completed, or not a write) */
  | { kind: "skipped"; reason: SkipReason }
  | { kind: "blank" }
  | { kind: "foreign" }
  | { kind: "malformed"; message: string };

const isObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

/**
 * An audit Event: audit.k8s.io's own type fields, or, where a tool re-serialised it without them (webhook
 * receivers, `jq -S`, log shippers keep `kind` and drop `apiVersion`, or drop both), its shape: an auditID,
 * a stage and a verb, and the request it describes (requestURI or objectRef).
 */
function isAuditEvent(v: unknown): boolean {
  if (!isObject(v)) return false;
  if (v.kind !== undefined && v.kind !== "Event") return false;
  if (typeof v.apiVersion === "string" && v.apiVersion.startsWith("audit.k8s.io/")) return true;
  if (v.apiVersion !== undefined) return false;
  return (
    typeof v.auditID === "string" && typeof v.stage === "string" && typeof v.verb === "string" && (typeof v.requestURI === "string" || isObject(v.objectRef))
  );
}

/**
 * The audit events in a parsed JSON value: an Event, an EventList (a webhook batch), or either one
 * inside a log envelope (`properties.log` as Azure writes it, alone or in an Event Hub message's
 * `records`; `message` in a CloudWatch Logs subscription message's `logEvents` and in the AWS CLI's
 * `aws logs filter-log-events` and `get-log-events` answers' `events`; `log` or `message` as container
 * log shippers write it), as a JSON object or as an escaped JSON string; or an array of any of these
 * (`jq -s`). null: not audit data.
 */
export function eventsOf(value: unknown, depth = 0): AuditEvent[] | null {
  if (depth > 3) return null;
  if (typeof value === "string") {
    const text = value.trim();
    if (!text.startsWith("{")) return null;
    try {
      return eventsOf(JSON.parse(text), depth + 1);
    } catch {
      return null;
    }
  }
  if (Array.isArray(value)) return batchEvents(value, depth);
  if (!isObject(value)) return null;
  if (isAuditEvent(value)) return [value as AuditEvent];
  // A batch re-serialised without its type fields is a list whose items are events.
  if (Array.isArray(value.items) && (value.kind === "EventList" || (value.kind === undefined && value.items.some(isAuditEvent))))
    return value.items.filter(isAuditEvent) as AuditEvent[];
  // Batches of log records: an Azure Event Hub message {"records": [{"category": "kube-audit", "properties": {"log": …}}]}; a
  // CloudWatch Logs subscription message, as EKS's audit log reaches Firehose and S3: {"logEvents": [{"message": …}]}; and
  // what the AWS CLI prints of a log group: {"events": [{"message": …}]}.
  const batch = [value.records, value.logEvents, value.events].find(Array.isArray);
  if (batch) return batchEvents(batch, depth);
  for (const inner of [isObject(value.properties) ? value.properties.log : undefined, value.log, value.message]) {
    if (inner === undefined) continue;
    const events = eventsOf(inner, depth + 1);
    if (events) return events;
  }
  return null;
}

/** The events of a batch's records: null when none of them is audit data. */
function batchEvents(records: unknown[], depth: number): AuditEvent[] | null {
  const found = records.map((record) => eventsOf(record, depth + 1)).filter((events) => events !== null);
  return found.length > 0 ? found.flat() : null;
}

// kube-apiserver writes kind and apiVersion first, then level, auditID, stage, requestURI and verb, all
// strings, so the first `"stage":"` and `"verb":"` are the event's own (a quote inside a string is escaped).
// Printers that keep the order and add whitespace (jq, an indenting JSON printer) keep that true.
const HEAD = /^\{\s*"kind":\s*"Event",\s*"apiVersion":\s*"audit\.k8s\.io\/v1(?:beta1)?",/;
const STAGE = /"stage":\s*"([A-Za-z]+)"/;
const VERB = /"verb":\s*"([a-z]+)"/;

/**
 * Whether a line in the kube-apiserver's own layout (`head`: its first 1 KiB or more) is visibly at a stage nothing
 * counts ("stage": RequestReceived, and ResponseStarted but for a watch's), or null when it has to be parsed: every
 * completed request is counted, reads and watches too. Only for lines that end the way a JSON object does; a line
 * cut off mid-write is parsed, so it is reported as malformed.
 */
export function skipByHead(head: string): "stage" | null {
  if (!HEAD.test(head)) return null;
  const stage = STAGE.exec(head)?.[1];
  if (!stage || COMPLETED_STAGES.has(stage)) return null;
  // A watch's start is counted; a verb past the head is not known, so that line is parsed.
  const verb = VERB.exec(head)?.[1];
  return stage === "ResponseStarted" && (verb === undefined || verb === "watch") ? null : "stage";
}

/** One line: skipped from its head when possible (unless the caller already checked), else parsed. */
export function readLine(line: string, headChecked = false): LineOutcome {
  const text = line.trim();
  if (text === "") return { kind: "blank" };
  if (!headChecked && text.endsWith("}")) {
    const reason = skipByHead(text.slice(0, 1024));
    if (reason) return { kind: "skipped", reason };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { kind: "malformed", message: (error as Error).message };
  }
  return valueOutcome(value);
}

/** A line already parsed: its audit events, or foreign. */
export function valueOutcome(value: unknown): LineOutcome {
  const events = eventsOf(value);
  return events === null ? { kind: "foreign" } : { kind: "events", events };
}

/** Why an event is not a completed write: not completed, not a write, or a dry run (validated, never stored). */
export type SkipReason = "stage" | "verb" | "dryRun";

export type EventOutcome = { kind: "request"; request: AuditRequest } | { kind: "skipped"; reason: SkipReason } | { kind: "invalid"; message: string };

/** A request sent with ?dryRun=All (any value but empty): the API server answered it and stored nothing. */
export function isDryRun(requestURI: string): boolean {
  const query = requestURI.indexOf("?");
  if (query < 0) return false;
  return new URLSearchParams(requestURI.slice(query + 1)).getAll("dryRun").some((v) => v !== "");
}

function timeMs(text: string | undefined): number | undefined {
  if (typeof text !== "string") return undefined;
  const ms = Date.parse(text);
  return Number.isNaN(ms) ? undefined : ms;
}

const str = (v: unknown): string => (typeof v === "string" ? v : "");

/** An RFC 3339 time in microseconds (the API server writes them), for ordering requests closer than a millisecond apart. */
export function timeUs(text: string | undefined): number | undefined {
  const ms = timeMs(text);
  if (ms === undefined) return undefined;
  const fraction = /\.(\d+)/.exec(text!)?.[1] ?? "";
  return ms * 1000 + Number(fraction.slice(3, 6).padEnd(3, "0"));
}

/** An event → a completed write request, or why not. */
export function toRequest(event: AuditEvent): EventOutcome {
  if (!COMPLETED_STAGES.has(str(event.stage))) return { kind: "skipped", reason: "stage" };
  if (!WRITE_VERBS.has(str(event.verb))) return { kind: "skipped", reason: "verb" };
  if (isDryRun(str(event.requestURI))) return { kind: "skipped", reason: "dryRun" };
  if (!event.auditID) return { kind: "invalid", message: "an audit event without auditID" };
  const received = timeMs(event.requestReceivedTimestamp);
  const tsMs = received ?? timeMs(event.timestamp) ?? timeMs(event.stageTimestamp);
  if (tsMs === undefined) return { kind: "invalid", message: `audit event ${event.auditID} has no valid requestReceivedTimestamp or timestamp` };
  const ref = isObject(event.objectRef) ? event.objectRef : {};
  const resource = str(ref.resource);
  if (resource === "") return { kind: "invalid", message: `audit event ${event.auditID} (${event.verb}) names no objectRef.resource` };
  const response = isObject(event.responseObject) && event.responseObject.kind !== "Status" ? event.responseObject : undefined;
  const metadata = response && isObject(response.metadata) ? response.metadata : {};
  const completed = timeMs(event.stageTimestamp);
  const precondition = str(ref.resourceVersion);
  return {
    kind: "request",
    request: {
      key: `${event.auditID}/${event.stage}`,
      tsMs,
      verb: str(event.verb),
      group: str(ref.apiGroup),
      resource,
      subresource: str(ref.subresource),
      namespace: str(ref.namespace),
      // A create with generateName has no name in objectRef; the response has it.
      name: str(ref.name) || str(metadata.name),
      user: str(event.user?.username) || "unknown",
      userAgent: str(event.userAgent),
      code: typeof event.responseStatus?.code === "number" ? event.responseStatus.code : 0,
      latencyMs: received !== undefined && completed !== undefined ? completed - received : null,
      // Writes to one object take effect in the order they complete.
      orderUs: timeUs(event.stageTimestamp) ?? tsMs * 1000,
      ...(precondition ? { precondition } : {}),
      ...(response
        ? {
            response: {
              ...(typeof response.kind === "string" ? { kind: response.kind } : {}),
              ...(typeof metadata.resourceVersion === "string" ? { resourceVersion: metadata.resourceVersion } : {}),
              ...(isObject(metadata.labels) ? { labels: metadata.labels as Record<string, string> } : {}),
              object: response as Json,
            },
          }
        : {}),
    },
  };
}
