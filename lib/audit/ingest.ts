/**
 * The audit ingester's core: audit lines or events in, completed write requests and object writes
 * out, into the store, with a count for every line and event it did not use and why. Requests are
 * stored in batches (one transaction each). Time and I/O belong to the callers (files, uploads, the
 * webhook); this core only reads what it is given.
 *
 * No-op detection needs bodies (RequestResponse level): a write whose response carries the object's
 * previous resourceVersion, or whose object equals the previous one after the profile's
 * normalisation, changed nothing. The previous version is the last one the audit log showed; the
 * first write seen of an object has none, so it is `unknown`, as is every write logged without bodies.
 */
import { analyzeVersions, prepare, type Analysis, type Version, type WriteClass } from "../churn/analyze";
import type { Json } from "../churn/json";
import { profileFor, type Profile } from "../churn/profiles";
import { resourceKey } from "../recorder/core";
import { AuditStore } from "../store/audit-store";
import type { ObjectKey, WriteRequest, WriteStore } from "../store/store";
import { readLine, toRequest, type AuditEvent, type AuditRequest } from "./event";

export interface IngestCounts {
  lines: number;
  blank: number;
  malformed: number;
  /** JSON that is not an audit event */
  foreign: number;
  events: number;
  /** RequestReceived / ResponseStarted: only completed requests count */
  notCompleted: number;
  /** reads and watches */
  notWrites: number;
  /** audit events that cannot be used (no auditID, no time, no resource) */
  invalid: number;
  /** the same auditID and stage already stored */
  duplicates: number;
  requests: number;
  /** requests answered with an error status: counted per client, not object writes */
  failed: number;
  /** writes to kinds no profile reads, or to whole collections: counted per client only */
  unprofiled: number;
  objectWrites: number;
  noop: number;
  unknown: number;
  /** writes the watch recorder had already stored, now with their audit details */
  matchedWatch: number;
}

export interface IngestProblem {
  source: string;
  line: number;
  message: string;
}

const MAX_PROBLEMS = 20;
/** Requests buffered before one transaction stores them, and the body bytes that flush early. */
const BATCH_REQUESTS = 1_000;
const BATCH_BYTES = 16 * 1024 * 1024;
/** Bodies of recently written objects kept parsed in memory (the store has the rest). */
const RECENT_BYTES = 64 * 1024 * 1024;

type Obj = { [key: string]: Json };

export function emptyCounts(): IngestCounts {
  return { lines: 0, blank: 0, malformed: 0, foreign: 0, events: 0, notCompleted: 0, notWrites: 0, invalid: 0, duplicates: 0, requests: 0, failed: 0, unprofiled: 0, objectWrites: 0, noop: 0, unknown: 0, matchedWatch: 0 };
}

export class AuditIngester {
  readonly counts = emptyCounts();
  readonly problems: IngestProblem[] = [];
  private readonly audit: AuditStore;
  private readonly byResource = new Map<string, Profile[]>();
  private pending: { request: AuditRequest; bytes: number }[] = [];
  private pendingBytes = 0;
  private readonly recent = new Map<number, { resourceVersion: string; version: Version; bytes: number }>();
  private recentBytes = 0;
  private readonly unsaved = new Map<number, { key: ObjectKey; resourceVersion: string; obj: Json }>();

  constructor(
    private readonly store: WriteStore,
    private readonly cluster: string,
    profiles: Profile[],
  ) {
    this.audit = new AuditStore(store);
    for (const profile of profiles) {
      const key = resourceKey(profile);
      this.byResource.set(key, [...(this.byResource.get(key) ?? []), profile]);
    }
  }

  private problem(source: string, line: number, message: string) {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push({ source, line, message: message.slice(0, 300) });
  }

  /** A line that cannot be read (not JSON, too long, or where a file stopped decoding). */
  malformed(source: string, lineNo: number, message: string): void {
    this.counts.malformed++;
    this.problem(source, lineNo, message);
  }

  /** One line of a log; `lineNo` and `source` only name it in problems. */
  line(text: string, lineNo: number, source: string): void {
    this.counts.lines++;
    const outcome = readLine(text);
    switch (outcome.kind) {
      case "blank":
        this.counts.blank++;
        return;
      case "foreign":
        this.counts.foreign++;
        return;
      case "malformed":
        this.malformed(source, lineNo, `not JSON: ${outcome.message}`);
        return;
      case "skipped":
        this.counts.events++;
        this.counts[outcome.reason === "stage" ? "notCompleted" : "notWrites"]++;
        return;
      case "events":
        this.events(outcome.events, source, lineNo, text.length);
    }
  }

  /** Events from one line or one webhook batch. */
  events(events: AuditEvent[], source: string, lineNo = 0, bytes = 0): void {
    for (const event of events) {
      this.counts.events++;
      const outcome = toRequest(event);
      if (outcome.kind === "skipped") this.counts[outcome.reason === "stage" ? "notCompleted" : "notWrites"]++;
      else if (outcome.kind === "invalid") {
        this.counts.invalid++;
        this.problem(source, lineNo, outcome.message);
      } else {
        this.pending.push({ request: outcome.request, bytes });
        this.pendingBytes += bytes;
      }
    }
    if (this.pending.length >= BATCH_REQUESTS || this.pendingBytes >= BATCH_BYTES) this.flush();
  }

  /** Stores what is buffered, in one transaction. */
  flush(): void {
    if (this.pending.length === 0) return;
    const batch = this.pending;
    this.pending = [];
    this.pendingBytes = 0;
    try {
      this.store.batch(() => {
        for (const { request, bytes } of batch) this.store1(request, bytes);
        for (const { key, resourceVersion, obj } of this.unsaved.values()) this.audit.setLatest(key, resourceVersion, JSON.stringify(obj));
      });
    } finally {
      // A failed transaction stored nothing of the batch: forget what memory says about it.
      this.unsaved.clear();
    }
  }

  private profilesOf(request: AuditRequest): Profile[] | undefined {
    return this.byResource.get(request.group ? `${request.resource}.${request.group}` : request.resource);
  }

  private previous(id: number, key: ObjectKey, profiles: Profile[]): { resourceVersion: string; version: Version } | undefined {
    const hit = this.recent.get(id);
    if (hit) return hit;
    const row = this.audit.latest(key);
    if (!row) return undefined;
    const obj = JSON.parse(row.body) as Json;
    return { resourceVersion: row.resourceVersion, version: prepare(this.profileFor(profiles, key, obj), obj) };
  }

  private profileFor(profiles: Profile[], key: ObjectKey, obj: Json | undefined): Profile {
    const labels = ((obj as Obj | undefined)?.metadata as Obj | undefined)?.labels as Record<string, string> | undefined;
    return profileFor(profiles, key.group, key.kind, key.cluster, labels) ?? profiles[0];
  }

  private remember(id: number, key: ObjectKey, resourceVersion: string, version: Version, bytes: number) {
    const old = this.recent.get(id);
    if (old) this.recentBytes -= old.bytes;
    this.recent.delete(id);
    this.recent.set(id, { resourceVersion, version, bytes });
    this.recentBytes += bytes;
    while (this.recentBytes > RECENT_BYTES && this.recent.size > 1) {
      const [oldest, entry] = this.recent.entries().next().value as [number, { bytes: number }];
      this.recent.delete(oldest);
      this.recentBytes -= entry.bytes;
    }
    this.unsaved.set(id, { key, resourceVersion, obj: version.obj });
  }

  private store1(request: AuditRequest, bytes: number): void {
    const requestId = this.audit.addRequest(this.cluster, request);
    if (requestId === null) {
      this.counts.duplicates++;
      return;
    }
    this.counts.requests++;
    if (request.code >= 300 || (request.code !== 0 && request.code < 200)) {
      this.counts.failed++;
      return;
    }
    const profiles = this.profilesOf(request);
    if (!profiles || request.name === "") {
      this.counts.unprofiled++;
      return;
    }
    const key: ObjectKey = { cluster: this.cluster, group: request.group, kind: profiles[0].kind, namespace: request.namespace, name: request.name };
    const id = this.store.idOf(key);
    const details: WriteRequest = { verb: request.verb, subresource: request.subresource, userAgent: request.userAgent, code: request.code, latencyMs: request.latencyMs };
    const before = this.previous(id, key, profiles);
    const after = request.responseObject;
    const resourceVersion = typeof ((after as Obj | undefined)?.metadata as Obj | undefined)?.resourceVersion === "string" ? (((after as Obj).metadata as Obj).resourceVersion as string) : undefined;
    const profile = this.profileFor(profiles, key, after ?? before?.version.obj);
    let analysis: Analysis;
    let cls: WriteClass;
    let body: Json | undefined;
    if (request.verb === "delete" || request.verb === "deletecollection") {
      analysis = before ? analyzeVersions(profile, before.version, undefined) : { cls: "delete", changes: [], writer: request.user, heartbeat: false, projection: {} };
      cls = "delete";
      body = before?.version.obj;
    } else if (after === undefined || resourceVersion === undefined) {
      analysis = { cls: "unknown", changes: [], writer: request.user, heartbeat: false, projection: {} };
      cls = request.verb === "create" ? "create" : "unknown";
    } else {
      const version = prepare(profile, after);
      if (request.verb === "create") {
        analysis = analyzeVersions(profile, undefined, version);
        cls = "create";
        body = after;
      } else if (!before) {
        // First sight of this object: nothing to compare with. Its version starts the chain (and its export).
        analysis = { cls: "unknown", changes: [], writer: request.user, heartbeat: false, projection: version.projection };
        cls = "unknown";
        this.store.recordFirstSeen(key, request.tsMs, version.projection, after);
      } else {
        const sameVersion = before.resourceVersion === resourceVersion;
        analysis = sameVersion ? { cls: "unrouted", changes: [], writer: request.user, heartbeat: false, projection: version.projection } : analyzeVersions(profile, before.version.profile === profile.name ? before.version : prepare(profile, before.version.obj), version);
        cls = sameVersion || analysis.changes.length === 0 ? "no-op" : analysis.cls;
      }
      this.remember(id, key, resourceVersion, version, bytes);
    }
    if (cls === "no-op" || cls === "routed" || cls === "unrouted") this.audit.markNoop(requestId, cls === "no-op");
    if (cls !== "no-op" && cls !== "unknown" && cls !== "delete" && resourceVersion !== undefined && this.audit.enrichWatchedWrite(key, resourceVersion, request.tsMs, request.user, details)) {
      this.counts.matchedWatch++;
      return;
    }
    this.counts.objectWrites++;
    if (cls === "no-op") this.counts.noop++;
    if (cls === "unknown") this.counts.unknown++;
    this.store.record(key, {
      tsMs: request.tsMs,
      cls,
      writer: request.user,
      source: "audit",
      heartbeat: analysis.heartbeat,
      changes: cls === "no-op" ? [] : analysis.changes,
      projection: analysis.projection,
      ...(resourceVersion === undefined ? {} : { resourceVersion }),
      ...(body === undefined ? {} : { body }),
      request: details,
    });
  }

  /** One paragraph for a person: what was stored, what was skipped and why, and the first problems. */
  summary(): string {
    const c = this.counts;
    const n = (v: number) => v.toLocaleString("en-US");
    const lines = [
      `${n(c.requests)} write requests stored (${n(c.objectWrites)} object writes: ${n(c.noop)} no-op, ${n(c.unknown)} not classifiable; ${n(c.matchedWatch)} matched watched writes; ${n(c.failed)} failed; ${n(c.unprofiled)} to unprofiled kinds)`,
      `from ${n(c.lines)} lines and ${n(c.events)} events: ${n(c.notWrites)} reads or watches and ${n(c.notCompleted)} not completed skipped; ${n(c.duplicates)} already stored; ${n(c.foreign)} foreign, ${n(c.blank)} blank, ${n(c.malformed)} malformed, ${n(c.invalid)} invalid`,
    ];
    for (const p of this.problems) lines.push(`  ${p.source}${p.line ? `:${p.line}` : ""}: ${p.message}`);
    return lines.join("\n");
  }
}
