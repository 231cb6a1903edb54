/**
 * The audit ingester: completed write requests in (from its reader, in this thread or another),
 * requests and object writes out, into the store, with a count of what was stored and why the rest
 * was not. Requests are stored in batches, one transaction each. Time and I/O belong to the callers
 * (files, uploads, the webhook).
 *
 * No-op detection needs bodies (RequestResponse level): a write whose response carries the object's
 * previous resourceVersion, or whose object equals the previous one after the profile's
 * normalisation, changed nothing. The previous version is the last one the audit log showed; the
 * first write seen of an object has none, so it is `unknown`.
 * A write whose answer is not the object (logged without bodies, or a subresource's other kind: a
 * Scale, a binding's Status) leaves a gap: the write after it is not compared across it. Such a write
 * may still be decided by the next write of its object, from what both sent as their precondition
 * (lib/churn/preconditions.ts); after each batch, the store's requests around it are read again for that.
 */
import { baselineOf } from "../churn/changes";
import { analyzeVersions, prepare, type Analysis, type Version } from "../churn/analyze";
import type { WriteClass } from "../churn/write-class";
import { preconditionVerdicts, type NoopEvidence } from "../churn/preconditions";
import type { Json } from "../churn/json";
import { profileFor, type Profile } from "../churn/profiles";
import { resourceKey } from "../recorder/core";
import type { AuditStore, NoopVerdict, ObjectTarget } from "../store/audit-store";
import { noopFlag } from "../store/joins";
import { Turns } from "../runtime/turns";
import { keptBody, VersionChain } from "../store/version-chain";
import type { PruneCounts, WriteStore } from "../store/store";
import { responseBody, type AuditEvent, type AuditRequest, type AuditResponse } from "./event";
import { clusterScope } from "../churn/scope";
import { AuditReader } from "./reader";
import { CallTally, writeCall, type TallyData } from "./calls";
import { FLOW_SCHEMA, flowSchemaOf, inMatchingOrder, type FlowSchema } from "../churn/flow-schemas";
import type { IngestCounts, IngestProblem, StoreCounts } from "../wire/audit";
import type { ObjectKey, WriteRequest } from "../wire/objects";

/** Requests read before one transaction stores them (reading thousands, then storing them, beats interleaving), and the body bytes that store them sooner. */
const BATCH_REQUESTS = 4_000;
/** Counted calls (distinct minutes and shapes, and watch stages) that store them sooner: a log of reads has few writes. */
const BATCH_CALLS = 20_000;
const BATCH_BYTES = 16 * 1024 * 1024;
/** Bodies of recently written objects kept parsed in memory (the store has the rest). */
const RECENT_BYTES = 64 * 1024 * 1024;
/** Versions of one object kept in memory, for writes that arrive after a later one (out-of-order webhook batches, an older log). */
const VERSIONS_PER_OBJECT = 8;

type Obj = { [key: string]: Json };

/** A version of an object as an audit log showed it: what the next write to it is compared with. */
interface KnownVersion {
  /** "" when not known */
  resourceVersion: string;
  /** the object; none for a write the log showed without it (a gap: the next write is not compared across it) */
  version?: Version;
  /** when, and by which request (auditID/stage), it was written */
  tsMs: number;
  requestKey: string | null;
  bytes: number;
  /** the stored write that made it, while this run knows it: compared again if a write before it comes later */
  write?: StoredAuditWrite;
  /** when the versions memory let go of between the one kept before this and this one were written (first, last) */
  forgotten?: Span;
}

interface Span {
  fromMs: number;
  toMs: number;
}

const union = (a: Span | undefined, b: Span | undefined): Span | undefined =>
  a && b ? { fromMs: Math.min(a.fromMs, b.fromMs), toMs: Math.max(a.toMs, b.toMs) } : (a ?? b);

/**
 * What memory holds of one object's version chain: its newest few versions by time, oldest first (the
 * store keeps the newest too), and the last one learnt when it is older than those. A write is compared
 * with its own predecessor, never with a later version nor across a version memory let go of, and a
 * write that arrives after a later one (the API server sends webhook batches concurrently; an older log
 * read after a newer one) has that later write compared with it again.
 */
interface Chain {
  versions: KnownVersion[];
}

/** A write this ingester stored, and in which of its runs (a run's counts say what that run stored). */
interface StoredAuditWrite {
  /** its row, while it is this request's: a row joined into the version the watch saw goes, and SQLite may give its id to a later row */
  id: number;
  requestKey: string;
  cls: WriteClass;
  writer: string;
  run: number;
}

const emptyStoreCounts = (): StoreCounts => ({
  duplicates: 0,
  requests: 0,
  failed: 0,
  unprofiled: 0,
  objectWrites: 0,
  noop: 0,
  unknown: 0,
  matchedWatch: 0,
  callsCounted: 0,
  watchEnds: 0,
});

/** Whether the API server answered a write with the version the object already had: then the write changed nothing. */
const answeredUnchanged = (before: KnownVersion | undefined, resourceVersion: string | undefined): boolean =>
  before !== undefined && before.resourceVersion !== "" && before.resourceVersion === resourceVersion;

/** What a class told from the log's bodies rests on: the API server's answer, or the compared objects. */
const evidenceOf = (cls: WriteClass, unchanged: boolean): NoopEvidence | null => (noopFlag(cls) === null ? null : unchanged ? "same-version" : "body");

/** The requests of one object a batch stored, by the span of their completion times. */
interface TouchedTarget {
  target: ObjectTarget;
  fromUs: number;
  toUs: number;
}

const isSuccess = (request: AuditRequest) => request.code === 0 || (request.code >= 200 && request.code < 300);

/** A stored request's write decided by the precondition rule: its flags, and the class its object write takes. */
interface SettledVerdict extends NoopVerdict {
  cls: "no-op" | "unknown";
}

/**
 * A class told without a diff. Module-level, like every helper on the per-write path: a closure made per write costs
 * more than the work it does (under tsx, each also gets its name defined).
 */
const unclassified = (cls: WriteClass, writer: string, projection: Record<string, string> = {}): Analysis => ({
  cls,
  changes: [],
  writer,
  heartbeat: false,
  projection,
});

/** A write the API server answered with the version the object already had: it wrote nothing. */
const echo = (writer: string, projection: Record<string, string> = {}): Analysis => ({ ...unclassified("no-op", writer, projection), traits: { echo: true } });

/** A gap whose write's resourceVersion is not known either: nothing can be compared with it. */
const blind = (v: KnownVersion): boolean => v.version === undefined && v.resourceVersion === "";

/** One write's class against the last audited version, and what to remember once it is stored. */
interface ClassifiedWrite {
  key: ObjectKey;
  resourceVersion?: string;
  analysis: Analysis;
  /** the object before this write, as the audit log last showed it */
  before?: Json;
  /** what the log shows of the object after this write, to compare the next one with (no version: a gap) */
  next?: { resourceVersion: string; version?: Version };
  /** the object's first audited version, kept as where its history starts */
  firstSeen?: Version;
  /** answered with the version the object had: it made none, so it is no watched write */
  unchanged?: boolean;
}

const labelsOf = (obj: Json | undefined) => ((obj as Obj | undefined)?.metadata as Obj | undefined)?.labels as Record<string, string> | undefined;

export class AuditIngester {
  /** Reads lines and events in this thread; a reader in another thread reports through `absorb` on it instead. */
  reader = this.newReader();
  private stored = emptyStoreCounts();
  private readonly audit: AuditStore;
  private readonly byResource = new Map<string, Profile[]>();
  private readonly isClusterScoped: (group: string, resource: string) => boolean;
  private pending: { request: AuditRequest; bytes: number }[] = [];
  private pendingBytes = 0;
  /** every other request counted per client since the last batch, of the log being read (`source`) */
  private readonly calls = new CallTally();
  /** the log being read, as the store knows it (lib/store/api-calls.ts): calls on its lines counted before are not counted again */
  private source: string | undefined;
  private readonly byKind = new Map<string, Profile[]>();
  private readonly chain: VersionChain<Chain>;
  private watched = false;
  private run = 0;
  /** what the retention pass before this run dropped, for the summary */
  pruned: PruneCounts | null = null;
  /** the earliest request stored, for the retention warning */
  private oldestMs = Infinity;

  constructor(
    private readonly store: WriteStore,
    private readonly cluster: string,
    readonly profiles: Profile[],
    /** parsed bodies kept in memory, in JSON bytes */
    recentBytes = RECENT_BYTES,
    /** runs first in each batch's transaction: throws when this process may no longer ingest (the intake's lease) */
    private readonly guard: () => Promise<void> = () => Promise.resolve(),
  ) {
    this.audit = store.audit();
    this.isClusterScoped = clusterScope(profiles);
    for (const profile of profiles) {
      const key = resourceKey(profile);
      this.byResource.set(key, [...(this.byResource.get(key) ?? []), profile]);
      this.byKind.set(`${profile.group}/${profile.kind}`, [...(this.byKind.get(`${profile.group}/${profile.kind}`) ?? []), profile]);
    }
    this.chain = new VersionChain<Chain>({
      // The newest audited version in the store; one stored before times were kept is taken as the oldest.
      read: async (key) => {
        const row = await this.audit.latest(key);
        if (!row) return undefined;
        // An empty body is a gap: the newest write was logged without the object.
        const version = row.body === "" ? undefined : this.versionOf(key, JSON.parse(row.body) as Json);
        return {
          versions: [{ resourceVersion: row.resourceVersion, version, tsMs: row.tsMs ?? -Infinity, requestKey: row.requestKey, bytes: row.body.length }],
        };
      },
      write: async (key, { versions }) => {
        const newest = versions.at(-1);
        if (newest)
          await this.audit.setLatest(
            key,
            newest.resourceVersion,
            newest.version ? JSON.stringify(newest.version.obj) : "",
            newest.tsMs,
            newest.requestKey ?? "",
          );
      },
      weigh: (chain) => chain.versions.reduce((sum, v) => sum + v.bytes, 0),
      capacity: recentBytes,
    });
  }

  private newReader(): AuditReader {
    return new AuditReader(
      (request, bytes) => this.push(request, bytes),
      () => this.settled(),
      (event, lineNo) => this.countCall(event, lineNo),
    );
  }

  /**
   * The log whose lines come next (`identity`: its first line's digest, a bucket object, a webhook batch's digest), and
   * the first of its lines whose calls were not counted yet: the reader counts from there, the store keeps how far.
   * Answers that line (Infinity: a webhook batch counted before).
   */
  async beginSource(identity: string): Promise<{ callsFromLine: number; flowSchemas: FlowSchema[] }> {
    await this.storePending(true);
    this.source = identity;
    const through = await this.store.apiCalls().coverage(this.cluster, identity);
    // A webhook batch's events have no line (0): all of it or none.
    this.reader.callsFromLine = identity.startsWith("webhook:") ? (through > 0 ? Infinity : 0) : through + 1;
    // The cluster's FlowSchemas as the recorder last saw them: each call is counted with the one that took it.
    const bodies = await this.store.liveBodies(this.cluster, FLOW_SCHEMA.group, FLOW_SCHEMA.kind);
    this.reader.flowSchemas = inMatchingOrder(bodies.map(flowSchemaOf).filter((s) => s !== null));
    return { callsFromLine: this.reader.callsFromLine, flowSchemas: [...this.reader.flowSchemas] };
  }

  /** A request counted per client, read in this thread. */
  private countCall(event: AuditEvent, lineNo: number): boolean {
    const counted = this.calls.count(event, this.reader.flowSchemas, lineNo);
    if (this.calls.size >= BATCH_CALLS) void this.storePending();
    return counted;
  }

  /** Calls counted by a reader in another thread, stored with the next batch. */
  absorbCalls(data: TallyData): void {
    this.calls.absorb(data);
    if (this.calls.size >= BATCH_CALLS) void this.storePending();
  }

  /**
   * Counts afresh from here, keeping what memory knows of the objects' versions: the webhook keeps an
   * ingester per cluster and answers each batch with that batch's counts.
   */
  async newRun(): Promise<void> {
    await this.flush();
    this.run++;
    this.reader = this.newReader();
    this.stored = emptyStoreCounts();
    this.oldestMs = Infinity;
    this.pruned = null;
  }

  get counts(): IngestCounts {
    return { ...this.reader.counts, ...this.stored };
  }

  get problems(): IngestProblem[] {
    return this.reader.problems;
  }

  line(text: string, lineNo: number, source: string): void {
    this.reader.line(text, lineNo, source);
  }

  events(events: AuditEvent[], source: string): void {
    this.reader.events(events, source);
  }

  /** A completed write request, stored with the next batch. */
  push(request: AuditRequest, bytes: number): void {
    // One object, one key: a cluster-scoped object has no namespace, whatever the event's objectRef says.
    if (request.namespace !== "" && this.isClusterScoped(request.group, request.resource)) request = { ...request, namespace: "" };
    this.pending.push({ request, bytes });
    this.pendingBytes += bytes;
    if (this.pending.length >= BATCH_REQUESTS || this.pendingBytes >= BATCH_BYTES) void this.storePending();
  }

  /** Batches stored one after another, in order; the first failure, after which none is stored, until `flush` reports it. */
  private readonly storing = new Turns();
  private failure: { error: unknown } | undefined;

  /**
   * Stores the requests waiting, and the calls counted once there are many (`all`: every one, at a log's end): a
   * minute's calls then go in as one row each, where a batch of writes every second of a busy log would split them.
   */
  private storePending(all = false): Promise<void> {
    const withCalls = all || this.calls.size >= BATCH_CALLS;
    if (this.pending.length === 0 && !(withCalls && this.calls.size > 0)) return this.storing.ended();
    const batch = this.pending;
    const calls = withCalls ? this.calls.take() : { counts: [], watches: [], throughLine: 0 };
    const source = this.source;
    this.pending = [];
    this.pendingBytes = 0;
    return this.storing
      .run(async () => (this.failure ? undefined : this.storeBatch(batch, calls, source)))
      .catch((error: unknown) => void (this.failure ??= { error }));
  }

  /** Resolves once no more than one batch waits to be stored: a reader awaits it, so memory holds about two batches. */
  settled(): Promise<void> {
    return this.storing.waiting > 1 ? this.storing.ended() : Promise.resolve();
  }

  /**
   * Stores the pending requests and waits for every batch before them. Each batch is one transaction; the objects'
   * last versions are saved once, at its end. If one fails, nothing of it (or after it) is stored, what memory says
   * about it is forgotten, and this throws its error.
   */
  async flush(): Promise<void> {
    await this.storePending(true);
    const failed = this.failure;
    this.failure = undefined;
    if (failed) throw failed.error;
  }

  private storeBatch(batch: { request: AuditRequest; bytes: number }[], calls: TallyData, source: string | undefined): Promise<void> {
    return this.chain.batch(
      this.store,
      async () => {
        await this.guard();
        // Only a store the watch recorder writes to can hold the same write twice.
        this.watched = await this.audit.hasWatchedObjects();
        await this.audit.learnStored(batch.map((b) => b.request));
        if (this.watched) await this.store.expectAudited(batch.flatMap(({ request }) => this.writtenObject(request)));
        const touched = new Map<string, TouchedTarget>();
        // Each write request stored is counted per client too, once, as it is stored once.
        const writes = new CallTally();
        for (const { request, bytes } of batch) if (await this.store1(request, bytes, writes)) this.touch(touched, request);
        const [, read] = await this.store.apiCalls().store(this.cluster, [{ data: writes.take() }, { data: calls, identity: source }]);
        this.stored.callsCounted += read.calls;
        this.stored.watchEnds += read.watchEnds;
        // Another process counted the same lines meanwhile (the same log read twice at once): left out whole.
        if (!read.stored && calls.counts.length + calls.watches.length > 0)
          this.reader.counts.callsCountedBefore += calls.counts.reduce((sum, c) => sum + c.n, 0) + calls.watches.length;
        // Each object's verdicts read its own requests alone: all are stored together, at the end.
        const verdicts: SettledVerdict[] = [];
        for (const t of touched.values()) verdicts.push(...(await this.settlePreconditions(t)));
        await this.audit.setNoops(verdicts);
        const reclassified = await this.store.reclassifyRequests(verdicts.filter((v) => v.evidence !== "watched-successor"));
        for (const { requestKey, cls } of verdicts)
          if (reclassified.has(requestKey)) {
            this.count(cls === "no-op" ? "unknown" : "no-op", -1);
            this.count(cls, +1);
          }
      },
      [...batch.map((b) => b.request.tsMs), ...calls.counts.map((c) => c.call.minuteMs), ...calls.watches.map((w) => w.endMs ?? w.startMs)],
    );
  }

  private touch(touched: Map<string, TouchedTarget>, request: AuditRequest): void {
    const orderUs = request.orderUs ?? request.tsMs * 1000;
    const { group, resource, namespace, name } = request;
    const text = `${group}\u0000${resource}\u0000${namespace}\u0000${name}`;
    const seen = touched.get(text);
    if (seen) {
      seen.fromUs = Math.min(seen.fromUs, orderUs);
      seen.toUs = Math.max(seen.toUs, orderUs);
    } else touched.set(text, { target: { cluster: this.cluster, group, resource, namespace, name }, fromUs: orderUs, toUs: orderUs });
  }

  /**
   * The precondition rule over the stored writes of one object around a batch's: a write the batch stored
   * decides the one before it, and is decided by the one after it, whichever arrived first.
   */
  private async settlePreconditions({ target, fromUs, toUs }: TouchedTarget): Promise<SettledVerdict[]> {
    const settled: SettledVerdict[] = [];
    const { writes, lastIsNewest } = await this.audit.writesAround(target, fromUs, toUs);
    const verdicts = preconditionVerdicts(writes);
    // The last one read is decided only when it is the object's newest: else its own next was not read.
    const decided = lastIsNewest ? verdicts.length : verdicts.length - 1;
    for (const [i, verdict] of verdicts.slice(0, decided).entries()) {
      const write = writes[i];
      if (!verdict) continue;
      const cls = verdict.noop ? "no-op" : "unknown";
      let { noop, evidence } = verdict;
      if (this.watched && write.precondition) {
        // The last write sent against a version is the one that can have made the next, which the watch may have seen;
        // unless a request with no precondition (a patch) came between, which could have made it as well.
        const next = writes[i + 1];
        const last = next === undefined || (next.precondition !== undefined && next.precondition !== write.precondition);
        const watchedAs = await this.store.placeByPrecondition(write.requestKey, write.precondition, last, cls);
        if (watchedAs) [noop, evidence] = [noopFlag(watchedAs), "watched-successor"];
      }
      if (noop === write.noop && evidence === write.evidence) continue;
      // The object write too, where the kind is profiled: no-op, or what it was before (its fields are not known either way).
      settled.push({ requestKey: write.requestKey, noop, evidence, cls });
    }
    return settled;
  }

  private profilesOf(request: AuditRequest): Profile[] | undefined {
    return this.byResource.get(request.group ? `${request.resource}.${request.group}` : request.resource);
  }

  /**
   * The version a write follows: the newest known one written no later than it by another request (a
   * request read again is not compared with the version it made itself), if memory or the store has it.
   */
  private async previous(key: ObjectKey, request: AuditRequest): Promise<KnownVersion | undefined> {
    const versions = (await this.chain.get(key))?.versions ?? [];
    for (let i = versions.length - 1; i >= 0; i--) {
      if (versions[i].tsMs > request.tsMs || versions[i].requestKey === request.key) continue;
      // A version memory let go of may lie between this one and the write: then what it follows is not known.
      const gap = versions[i + 1]?.forgotten;
      return gap && gap.fromMs <= request.tsMs ? undefined : versions[i];
    }
    return undefined;
  }

  private profileFor(profiles: Profile[], key: ObjectKey, labels: Record<string, string> | undefined): Profile {
    return profileFor(profiles, key.group, key.kind, key.cluster, labels) ?? profiles[0];
  }

  /** The profile that reads a stored version of an object, chosen by its kind and its labels. */
  private profileOfObject(key: ObjectKey, obj: Json | undefined): Profile {
    return this.profileFor(this.byKind.get(`${key.group}/${key.kind}`) ?? this.profiles, key, labelsOf(obj));
  }

  private versionOf(key: ObjectKey, obj: Json): Version {
    return prepare(this.profileOfObject(key, obj), obj);
  }

  /**
   * A stored write's version joins the chain in its place by time: the store is told only of a newest
   * version. A later write known to this run, which was compared with an earlier version, is compared
   * with this one now.
   */
  private async remember(key: ObjectKey, known: KnownVersion): Promise<void> {
    const chain = await this.chain.get(key);
    const newest = chain?.versions.at(-1);
    if (chain && newest && newest.tsMs <= known.tsMs && blind(newest) && blind(known)) {
      // A gap right after a gap says no more than when it was: the older one is let go of, noted on this one, as memory
      // lets versions go, so such an object keeps one entry, changed in place (a Metadata-level log is all gaps, and
      // long-lived entries must not churn). Its write is not kept: compared again, a gap's write could only be unknown.
      if (newest.forgotten) newest.forgotten.fromMs = Math.min(newest.forgotten.fromMs, newest.tsMs);
      else newest.forgotten = { fromMs: newest.tsMs, toMs: newest.tsMs };
      newest.forgotten.toMs = Math.max(newest.forgotten.toMs, newest.tsMs);
      newest.tsMs = known.tsMs;
      newest.requestKey = known.requestKey;
      newest.bytes = known.bytes;
      newest.write = undefined;
      this.chain.set(key, chain);
      return;
    }
    const all = [...(chain?.versions ?? [])];
    let at = all.length;
    while (at > 0 && all[at - 1].tsMs > known.tsMs) at--;
    all.splice(at, 0, known);
    const later = all[at + 1];
    // What was forgotten before the later version now lies before or after this one, as its time says.
    const gap = later?.forgotten;
    if (later && gap) {
      known.forgotten = gap.fromMs < known.tsMs ? { fromMs: gap.fromMs, toMs: Math.min(gap.toMs, known.tsMs) } : undefined;
      later.forgotten = gap.toMs > known.tsMs ? { fromMs: Math.max(gap.fromMs, known.tsMs), toMs: gap.toMs } : undefined;
    }
    // Kept: the newest few by time (a late webhook batch lands among them), and the one just learnt if older than
    // those (an older log's writes follow one another). Each version let go of is noted on the next one kept.
    const outside = new Set(all.slice(0, Math.max(0, all.length - VERSIONS_PER_OBJECT)));
    outside.delete(known);
    const versions: KnownVersion[] = [];
    let forgotten: Span | undefined;
    for (const v of all) {
      if (outside.has(v)) forgotten = union(forgotten, union(v.forgotten, { fromMs: v.tsMs, toMs: v.tsMs }));
      else {
        if (forgotten) v.forgotten = union(v.forgotten, forgotten);
        forgotten = undefined;
        versions.push(v);
      }
    }
    if (later === undefined) this.chain.set(key, { versions });
    else this.chain.keep(key, { versions });
    // The later version is compared again only when no version was forgotten between the two.
    if (later?.write && !(gap && gap.toMs > known.tsMs)) await this.compareAgain(key, later, known);
  }

  /** A stored write compared with the version just before it, learnt after it was stored. */
  private async compareAgain(key: ObjectKey, later: KnownVersion, before: KnownVersion): Promise<void> {
    const { write } = later;
    // A create starts its object whatever came before (an earlier object of the same name); a delete ends it.
    if (!write || write.cls === "create" || write.cls === "delete") return;
    const profile = this.profileOfObject(key, later.version?.obj);
    const analysis = this.compared(profile, before, later.version, later.resourceVersion, write.writer);
    // A row the recorder joined keeps the recorder's class: it saw every version in order.
    if (!(await this.store.reclassify(write, analysis))) return;
    if (write.run === this.run) {
      this.count(write.cls, -1);
      this.count(analysis.cls, +1);
    }
    later.write = { ...write, cls: analysis.cls };
    if (later.requestKey)
      await this.audit.setNoop(later.requestKey, noopFlag(analysis.cls), evidenceOf(analysis.cls, answeredUnchanged(before, later.resourceVersion)));
  }

  private count(cls: WriteClass, by: number) {
    if (cls === "no-op") this.stored.noop += by;
    if (cls === "unknown") this.stored.unknown += by;
  }

  /**
   * A write's result compared with what the log showed before it: no-op when the API server answered with the
   * version it had, or nothing the profile reads changed; unknown when either side is a gap.
   */
  private compared(profile: Profile, before: KnownVersion, version: Version | undefined, resourceVersion: string, writer: string): Analysis {
    if (answeredUnchanged(before, resourceVersion)) return echo(writer, (before.version ?? version)?.projection);
    if (!before.version || !version) return unclassified("unknown", writer, version?.projection);
    return analyzeVersions(profile, before.version.profile === profile.name ? before.version : prepare(profile, before.version.obj), version);
  }

  /** What the log shows of an object after a write: its version when the answer is the object, else a gap. */
  private resultOf(profile: Profile, shownResponse: AuditResponse | undefined, resourceVersion: string | undefined): NonNullable<ClassifiedWrite["next"]> {
    return shownResponse && resourceVersion !== undefined
      ? { resourceVersion, version: prepare(profile, responseBody(shownResponse) as Json) }
      : { resourceVersion: resourceVersion ?? "" };
  }

  /**
   * What a successful write to a profiled object did, compared with the object's last audited
   * version. Reads state, changes none: the caller applies `next` once the request is known to be new.
   */
  private async classify(request: AuditRequest, profiles: Profile[]): Promise<ClassifiedWrite> {
    const key = this.keyOf(request, profiles);
    const before = await this.previous(key, request);
    const response = request.response;
    const resourceVersion = response?.resourceVersion;
    const profile = this.profileFor(profiles, key, response ? response.labels : labelsOf(before?.version?.obj));
    const base = { key, resourceVersion, before: before?.version?.obj };
    // The object after the write, when the log shows it: a subresource may answer with another kind (a Scale, a binding's Status).
    const shown = response !== undefined && resourceVersion !== undefined && (response.kind === undefined || response.kind === key.kind);
    const shownResponse = shown ? response : undefined;
    if (request.subresource === "" && (request.verb === "delete" || request.verb === "deletecollection")) {
      return {
        ...base,
        next: this.resultOf(profile, shownResponse, resourceVersion),
        analysis: before?.version ? analyzeVersions(profile, before.version, undefined) : unclassified("delete", request.user),
      };
    }
    // 201 Created: the API server made the object, whatever the verb (a server-side apply's patch, an update of one that was not there).
    if (request.subresource === "" && (request.verb === "create" || request.code === 201)) {
      const next = this.resultOf(profile, shownResponse, resourceVersion);
      return { ...base, next, analysis: next.version ? analyzeVersions(profile, undefined, next.version) : unclassified("create", request.user) };
    }
    if (before && answeredUnchanged(before, resourceVersion)) {
      // The API server answered with the version it already had: nothing was written (and, after a gap, the object is known again).
      return {
        ...base,
        ...(before.version || !shown ? {} : { next: this.resultOf(profile, shownResponse, resourceVersion) }),
        unchanged: true,
        analysis: echo(request.user, before.version?.projection),
      };
    }
    const next = this.resultOf(profile, shownResponse, resourceVersion);
    // First sight of this object: nothing to compare with. Its version starts the chain (and its export).
    if (!before)
      return { ...base, next, ...(next.version ? { firstSeen: next.version } : {}), analysis: unclassified("unknown", request.user, next.version?.projection) };
    return { ...base, next, analysis: this.compared(profile, before, next.version, next.resourceVersion, request.user) };
  }

  private keyOf(request: AuditRequest, profiles: Profile[]): ObjectKey {
    return { cluster: this.cluster, group: request.group, kind: profiles[0].kind, namespace: request.namespace, name: request.name };
  }

  /** The profiles of the object a request wrote, if it is a write `store1` compares (a successful one of a named, profiled object). */
  private writtenProfiles(request: AuditRequest): Profile[] | undefined {
    return isSuccess(request) && request.name !== "" ? this.profilesOf(request) : undefined;
  }

  /** The object a request wrote and when, if it is a write `store1` compares. */
  private writtenObject(request: AuditRequest): { key: ObjectKey; tsMs: number }[] {
    const profiles = this.writtenProfiles(request);
    return profiles ? [{ key: this.keyOf(request, profiles), tsMs: request.tsMs }] : [];
  }

  /** Stores one request (counted in `calls` when new); answers whether it is a new successful write of a named object (one the precondition rule reads). */
  private async store1(request: AuditRequest, bytes: number, calls: CallTally): Promise<boolean> {
    const succeeded = isSuccess(request);
    const profiles = this.writtenProfiles(request);
    const write = profiles ? await this.classify(request, profiles) : undefined;
    const cls = write?.analysis.cls;
    if (!(await this.audit.addRequest(this.cluster, request, noopFlag(cls), cls ? evidenceOf(cls, write.unchanged === true) : null))) {
      this.stored.duplicates++;
      return false;
    }
    this.stored.requests++;
    calls.add(writeCall(request));
    this.oldestMs = Math.min(this.oldestMs, request.tsMs);
    if (!succeeded) this.stored.failed++;
    if (!write || !cls) {
      if (succeeded) this.stored.unprofiled++;
      return succeeded && request.name !== "";
    }
    const { key, resourceVersion, analysis } = write;
    if (write.firstSeen) {
      const profile = profiles?.find((p) => p.name === write.firstSeen!.profile);
      await this.store.recordFirstSeen(key, request.tsMs, write.firstSeen.projection, write.firstSeen.obj, profile && baselineOf(profile, write.firstSeen));
    }
    const details: WriteRequest = {
      verb: request.verb,
      subresource: request.subresource,
      userAgent: request.userAgent,
      code: request.code,
      latencyMs: request.latencyMs,
    };
    const body = keptBody(cls, write.before, write.next?.version?.obj);
    const {
      id,
      joined,
      echo: echoed,
    } = await this.store.record(
      key,
      {
        tsMs: request.tsMs,
        cls,
        writer: request.user,
        source: "audit",
        heartbeat: analysis.heartbeat,
        changes: analysis.changes,
        projection: analysis.projection,
        ...(resourceVersion === undefined ? {} : { resourceVersion }),
        ...(body === undefined ? {} : { body }),
        ...(analysis.change && { change: analysis.change }),
        ...(analysis.traits && { traits: analysis.traits }),
        request: details,
      },
      // Only a store the watch recorder writes to can hold the same write already.
      { requestKey: request.key, joinable: this.watched && !write.unchanged },
    );
    if (joined) {
      this.stored.matchedWatch++;
      await this.learn(write, request, bytes);
      return true;
    }
    this.stored.objectWrites++;
    // Received after the watch saw the version it was answered with: the store made it an echo.
    const storedCls = echoed ? "no-op" : cls;
    this.count(storedCls, +1);
    await this.learn(write, request, bytes, { id, requestKey: request.key, cls: storedCls, writer: request.user, run: this.run });
    return true;
  }

  /** What the log shows of the object after a stored write joins its chain, with the write while this run knows it. */
  private async learn(write: ClassifiedWrite, request: AuditRequest, bytes: number, stored?: StoredAuditWrite): Promise<void> {
    // Every entry with the same fields in the same order: entries are read and changed on every write to their object.
    const { next } = write;
    if (next)
      await this.remember(write.key, {
        resourceVersion: next.resourceVersion,
        version: next.version,
        tsMs: request.tsMs,
        requestKey: request.key,
        bytes,
        write: stored,
        forgotten: undefined,
      });
  }

  /** Said when some stored requests are older than the store keeps writes, so the next retention pass drops them. */
  retentionWarning(retentionMs: number, nowMs = Date.now()): string | null {
    if (this.oldestMs >= nowMs - retentionMs) return null;
    const days = Math.round(retentionMs / 86_400_000);
    return `Requests from ${new Date(this.oldestMs).toISOString()} on are older than recorder.retentionDays (${days}) and will be dropped within the hour; raise recorder.retentionDays to keep them.`;
  }

  /** One paragraph for a person: what was stored, what was skipped and why, and the first problems. */
  summary(): string {
    const c = this.counts;
    const n = (v: number) => v.toLocaleString("en-US");
    const lines = [
      `${n(c.requests)} write requests stored (${n(c.objectWrites)} object writes: ${n(c.noop)} no-op, ${n(c.unknown)} not classifiable; ${n(c.matchedWatch)} matched watched writes; ${n(c.failed)} failed; ${n(c.unprofiled)} to unprofiled kinds)`,
      `from ${n(c.lines)} lines and ${n(c.events)} events: ${n(c.notWrites)} reads or watches, ${n(c.notCompleted)} not completed and ${n(c.dryRuns)} dry runs not stored one by one; ${n(c.duplicates)} already stored; ${n(c.foreign)} foreign, ${n(c.blank)} blank, ${n(c.malformed)} malformed, ${n(c.invalid)} invalid`,
      `${n(c.callsCounted)} reads, watch starts, dry runs and non-resource requests counted per client (${n(c.watchEnds)} watch ends with their lifetimes)${
        c.callsCountedBefore > 0 ? `; ${n(c.callsCountedBefore)} on lines counted before, left out` : ""
      }`,
    ];
    if (this.pruned && this.pruned.requests + this.pruned.writes > 0) {
      lines.push(
        `retention: pruned ${n(this.pruned.requests)} requests and ${n(this.pruned.writes)} object writes older than ${new Date(this.pruned.beforeMs).toISOString()} (recorder.retentionDays)`,
      );
    }
    for (const p of this.problems) lines.push(`  ${p.source}${p.line ? `:${p.line}` : ""}: ${p.message}`);
    return lines.join("\n");
  }
}
