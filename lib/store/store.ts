/**
 * The object-write store: objects, their writes with class, writer, source and changed fields, a row
 * per changed field for field-churn ranking, each object's first-seen and last version, and gaps,
 * over one database (database.ts). Its repositories answer the Objects and Field churn rankings
 * (ranking.ts), the timeline, and the audit side (audit-store.ts).
 */
import type Database from "better-sqlite3";
import type { FieldChange } from "../churn/diff";
import type { WriteClass } from "../churn/analyze";
import type { Json } from "../churn/json";
import type { FieldRow, ObjectHistory, ObjectKey, PickedWriteAnswer, StoredWrite } from "../wire/objects";
import { AuditStore } from "./audit-store";
import { BucketCheckpoints } from "./bucket-checkpoints";
import { StoreDatabase } from "./database";
import { DayRollups } from "./day-rollups";
import { noopFlag, WriteJoins } from "./joins";
import { Ranking, type ObjectFilter, type RankOptions } from "./ranking";
import { Timelines, type WritePick } from "./timelines";
import type { ObjectTimeline } from "../objects/timeline";
import type { WriteRepository } from "./types";

export type { ObjectFilter } from "./ranking";

/** What one retention pass dropped: audit requests and object writes older than `beforeMs`. */
export interface PruneCounts {
  beforeMs: number;
  requests: number;
  writes: number;
}

/** How often the background looks for quarter hours to roll up once all are. */
const ROLL_IDLE_MS = 20_000;

export class WriteStore implements WriteRepository {
  readonly database: StoreDatabase;
  private readonly insertWrite: Database.Statement;
  private readonly insertField: Database.Statement;
  private readonly rollups: DayRollups;
  private readonly ranking: Ranking;
  private readonly timelines: Timelines;
  private readonly joins: WriteJoins;
  /** whether any audit request is stored, asked once per batch (null outside one): only then can a watched write have been audited first */
  private audited: boolean | undefined | null = null;
  private auditStore?: AuditStore;
  private bucketStore?: BucketCheckpoints;

  constructor(path: string) {
    this.database = new StoreDatabase(path);
    this.insertWrite = this.db.prepare(
      "INSERT INTO writes (object_id, ts_ms, rv, class, writer, source, heartbeat, changes, projection, body, verb, subresource, user_agent, code, latency_ms, request_key, prev_rv) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
    );
    this.insertField = this.db.prepare("INSERT INTO field_changes (write_id, object_id, ts_ms, path, writer) VALUES (?, ?, ?, ?, ?)");
    this.rollups = new DayRollups(this.db);
    this.ranking = new Ranking(this.database, this.rollups);
    this.timelines = new Timelines(this.database);
    this.joins = new WriteJoins(this.database);
  }

  /** The SQLite connection, for what reads the file directly (tests, the roll-ups). */
  get db(): Database.Database {
    return this.database.db;
  }

  close(): void {
    this.database.close();
  }

  statement(sql: string): Database.Statement {
    return this.database.statement(sql);
  }

  idOf(key: ObjectKey): number {
    return this.database.idOf(key);
  }

  getMeta(key: string): string | undefined {
    return this.database.getMeta(key);
  }

  setMeta(key: string, value: string): void {
    this.database.setMeta(key, value);
  }

  sizeBytes(): number {
    return this.database.sizeBytes();
  }

  /** Objects ranked by writes in (from, to], one page (ranking.ts). */
  objects(filter: ObjectFilter, limit: number, offset: number, options?: RankOptions): ReturnType<Ranking["objects"]> {
    return this.ranking.objects(filter, limit, offset, options);
  }

  kinds(): { cluster: string; group: string; kind: string }[] {
    return this.ranking.kinds();
  }

  fields(filter: ObjectFilter, limit: number): FieldRow[] {
    return this.ranking.fields(filter, limit);
  }

  /**
   * Stores one write and answers its row's id, or, when the other source already stored the same write
   * (joins.ts), joins that row and answers its id with `joined`. `requestKey`: the audit request it
   * came from; `joinable: false` for a write that made no version (answered with the one it had).
   */
  record(
    key: ObjectKey,
    write: StoredWrite,
    { requestKey, joinable = true }: { requestKey?: string; joinable?: boolean } = {},
  ): { id: number; joined: boolean } {
    const objectId = this.idOf(key);
    const joined = !joinable
      ? undefined
      : write.source === "watch"
        ? this.anyAudited()
          ? this.joins.intoAudited(objectId, write)
          : undefined
        : write.source === "audit"
          ? this.joins.intoWatched(objectId, write, requestKey)
          : undefined;
    if (joined) {
      this.rewriteFields(joined.id, objectId, joined.tsMs, write.source === "watch" ? write.changes : undefined, joined.writer);
      if (joined.requestKey)
        this.audit().setNoop(joined.requestKey, noopFlag(joined.cls), "by" in joined && joined.by === "precondition" ? "watched-successor" : "watch");
      return { id: joined.id, joined: true };
    }
    const id = Number(
      this.insertWrite.run(
        objectId,
        write.tsMs,
        write.resourceVersion ?? null,
        write.cls,
        write.writer,
        write.source,
        write.heartbeat ? 1 : 0,
        JSON.stringify(write.changes),
        JSON.stringify(write.projection),
        write.body === undefined ? null : JSON.stringify(write.body),
        write.request?.verb ?? null,
        write.request?.subresource ?? null,
        write.request?.userAgent ?? null,
        write.request?.code ?? null,
        write.request?.latencyMs ?? null,
        requestKey ?? null,
        write.previousVersion ?? null,
      ).lastInsertRowid,
    );
    for (const change of write.changes) this.insertField.run(id, objectId, write.tsMs, change.path, write.writer);
    this.rollups.written(write.tsMs);
    return { id, joined: false };
  }

  /** A row's field rows written again: with `changes`, those; without, its own with the row's writer now. */
  private rewriteFields(id: number, objectId: number, tsMs: number, changes: FieldChange[] | undefined, writer: string): void {
    if (changes === undefined) {
      this.statement("UPDATE field_changes SET writer = ? WHERE ts_ms = ? AND object_id = ? AND write_id = ?").run(writer, tsMs, objectId, id);
    } else {
      this.statement("DELETE FROM field_changes WHERE ts_ms = ? AND object_id = ? AND write_id = ?").run(tsMs, objectId, id);
      for (const change of changes) this.insertField.run(id, objectId, tsMs, change.path, writer);
    }
    this.rollups.written(tsMs);
  }

  /**
   * A stored write compared again with the version before it, which audit ingest learnt of only later
   * (webhook batches can arrive out of order): its class, changes and projection. Gone (pruned), or
   * joined by the recorder, which saw every version in order: nothing. Answers whether it changed.
   */
  reclassify(id: number, write: Pick<StoredWrite, "cls" | "heartbeat" | "changes" | "projection">): boolean {
    const row = this.statement(
      "UPDATE writes SET class = ?, heartbeat = ?, changes = ?, projection = ? WHERE id = ? AND source = 'audit' RETURNING object_id AS objectId, ts_ms AS tsMs, writer",
    ).get(write.cls, write.heartbeat ? 1 : 0, JSON.stringify(write.changes), JSON.stringify(write.projection), id) as
      { objectId: number; tsMs: number; writer: string } | undefined;
    if (!row) return false;
    this.rewriteFields(id, row.objectId, row.tsMs, write.changes, row.writer);
    return true;
  }

  /**
   * An audited write whose class a later request of the same object decided (a Metadata-level log's
   * preconditions): no-op, or back to unknown. Only such a row changes; answers whether it did.
   */
  reclassifyRequest(requestKey: string, cls: "no-op" | "unknown"): boolean {
    const row = this.statement(
      "UPDATE writes SET class = ? WHERE request_key = ? AND source = 'audit' AND class IN ('no-op', 'unknown') AND class <> ? RETURNING ts_ms AS tsMs",
    ).get(cls, requestKey, cls) as { tsMs: number } | undefined;
    if (row) this.rollups.written(row.tsMs);
    return row !== undefined;
  }

  /** A Metadata-level write joined to, or parted from, the watched version it made (joins.ts); the class it now has as that version, if it is one. */
  placeByPrecondition(requestKey: string, precondition: string, last: boolean, cls: "no-op" | "unknown"): WriteClass | null | undefined {
    const placed = this.joins.placeByPrecondition(requestKey, precondition, last, cls);
    for (const tsMs of placed?.tsMs ?? []) this.rollups.written(tsMs);
    return placed?.cls;
  }

  /** The projection of an object as first seen (a list, or a snapshot's first version), before any recorded write. */
  recordFirstSeen(key: ObjectKey, tsMs: number, projection: Record<string, string>, body?: Json): void {
    this
      // An older log read later moves it back: it is where the object's known history starts.
      .statement(
        "INSERT INTO first_seen (object_id, ts_ms, projection, body) VALUES (?, ?, ?, ?) ON CONFLICT (object_id) DO UPDATE SET ts_ms = excluded.ts_ms, projection = excluded.projection, body = excluded.body WHERE excluded.ts_ms < first_seen.ts_ms",
      )
      .run(this.idOf(key), tsMs, JSON.stringify(projection), body === undefined ? null : JSON.stringify(body));
  }

  /**
   * Every object written in (fromMs, toMs] with what it takes to rebuild its versions: its first-seen
   * body and all its writes up to toMs, oldest first. At most `maxWrites` writes, else null.
   */
  histories(fromMs: number, toMs: number, maxWrites: number): ObjectHistory[] | null {
    const ids = (this.db.prepare("SELECT DISTINCT object_id AS id FROM writes WHERE ts_ms > ? AND ts_ms <= ?").all(fromMs, toMs) as { id: number }[]).map(
      (r) => r.id,
    );
    const objectRow = this.db.prepare(
      "SELECT o.cluster, o.grp, o.kind, o.namespace, o.name, f.ts_ms AS seenMs, f.body AS seenBody FROM objects o LEFT JOIN first_seen f ON f.object_id = o.id WHERE o.id = ?",
    );
    const writeRows = this.db.prepare("SELECT ts_ms, class, writer, changes, body FROM writes WHERE object_id = ? AND ts_ms <= ? ORDER BY ts_ms, id");
    const out: ObjectHistory[] = [];
    let total = 0;
    for (const id of ids) {
      const o = objectRow.get(id) as {
        cluster: string;
        grp: string;
        kind: string;
        namespace: string;
        name: string;
        seenMs: number | null;
        seenBody: string | null;
      };
      const writes = (writeRows.all(id, toMs) as { ts_ms: number; class: WriteClass; writer: string; changes: string; body: string | null }[]).map((w) => ({
        tsMs: w.ts_ms,
        cls: w.class,
        writer: w.writer,
        changes: JSON.parse(w.changes) as FieldChange[],
        body: w.body === null ? undefined : (JSON.parse(w.body) as Json),
      }));
      total += writes.length;
      if (total > maxWrites) return null;
      out.push({
        key: { cluster: o.cluster, group: o.grp, kind: o.kind, namespace: o.namespace, name: o.name },
        firstSeen: o.seenBody === null || o.seenMs === null ? undefined : { tsMs: o.seenMs, body: JSON.parse(o.seenBody) as Json },
        writes,
      });
    }
    return out;
  }

  /** The last version the recorder saw of an object (null body: deleted). */
  latest(key: ObjectKey): { resourceVersion: string; body: string | null } | undefined {
    const row = this.statement(
      "SELECT l.rv, l.body FROM latest l JOIN objects o ON o.id = l.object_id WHERE o.cluster = ? AND o.grp = ? AND o.kind = ? AND o.namespace = ? AND o.name = ?",
    ).get(key.cluster, key.group, key.kind, key.namespace, key.name) as { rv: string; body: string | null } | undefined;
    return row ? { resourceVersion: row.rv, body: row.body } : undefined;
  }

  setLatest(key: ObjectKey, resourceVersion: string, body: string | null): void {
    this.statement(
      "INSERT INTO latest (object_id, rv, body) VALUES (?, ?, ?) ON CONFLICT (object_id) DO UPDATE SET rv = excluded.rv, body = excluded.body",
    ).run(this.idOf(key), resourceVersion, body);
  }

  /** Objects of a kind on a cluster that the recorder last saw alive. */
  liveKeys(cluster: string, group: string, kind: string): ObjectKey[] {
    return this.db
      .prepare(
        'SELECT o.cluster, o.grp AS "group", o.kind, o.namespace, o.name FROM latest l JOIN objects o ON o.id = l.object_id WHERE o.cluster = ? AND o.grp = ? AND o.kind = ? AND l.body IS NOT NULL',
      )
      .all(cluster, group, kind) as ObjectKey[];
  }

  openGap(cluster: string, profile: string, fromMs: number, reason: string): void {
    const open = this.statement("SELECT 1 FROM gaps WHERE cluster = ? AND profile = ? AND to_ms IS NULL").get(cluster, profile);
    if (!open) this.statement("INSERT INTO gaps (cluster, profile, from_ms, to_ms, reason) VALUES (?, ?, ?, NULL, ?)").run(cluster, profile, fromMs, reason);
  }

  closeGap(cluster: string, profile: string, toMs: number): void {
    this.statement("UPDATE gaps SET to_ms = ? WHERE cluster = ? AND profile = ? AND to_ms IS NULL").run(toMs, cluster, profile);
  }

  gaps(fromMs: number, toMs: number): { cluster: string; profile: string; fromMs: number; toMs: number | null; reason: string }[] {
    return (
      this.statement("SELECT cluster, profile, from_ms, to_ms, reason FROM gaps WHERE from_ms <= ? AND (to_ms IS NULL OR to_ms > ?) ORDER BY from_ms").all(
        toMs,
        fromMs,
      ) as { cluster: string; profile: string; from_ms: number; to_ms: number | null; reason: string }[]
    ).map((g) => ({
      cluster: g.cluster,
      profile: g.profile,
      fromMs: g.from_ms,
      toMs: g.to_ms,
      reason: g.reason,
    }));
  }

  /** Drops writes (and audit requests, and bucket checkpoints) older than `beforeMs` (retention); objects and their last versions stay. */
  prune(beforeMs: number): PruneCounts {
    return this.batch(() => {
      this.db.prepare("DELETE FROM field_changes WHERE ts_ms < ?").run(beforeMs);
      const requests = this.db.prepare("DELETE FROM audit_requests WHERE ts_ms < ?").run(beforeMs).changes;
      // A bucket's objects from before retention are skipped by their time alone: their checkpoints go too.
      this.buckets().prune(beforeMs);
      this.rollups.pruned(beforeMs);
      return { beforeMs, requests, writes: this.db.prepare("DELETE FROM writes WHERE ts_ms < ?").run(beforeMs).changes };
    });
  }

  /** The audit side of this store (requests, last audited versions). */
  audit(): AuditStore {
    return (this.auditStore ??= new AuditStore(this.database));
  }

  /** What each audit bucket source read, and its polls. */
  buckets(): BucketCheckpoints {
    return (this.bucketStore ??= new BucketCheckpoints(this.database));
  }

  /** Rolls up to `maxSlices` quarter hours of the days that are over, for the Objects ranking; returns how many. */
  rollPending(nowMs = Date.now(), maxSlices = Infinity): number {
    return this.rollups.rollPending(nowMs, maxSlices);
  }

  /**
   * Keeps the rollups caught up while the store is open: a quarter hour at a time, each followed by a
   * pause twice as long as it took. A backlog (a store filled before anything rolled it up: 14 days of
   * 10 M writes take about two minutes of steps) then catches up in minutes, and other writers to the
   * store get the lock two thirds of the time. With nothing pending it looks again after `idleMs`.
   * `keepAlive` lets the timer hold the thread open (the dashboard's roll-up thread has nothing else to
   * do). Returns what stops it.
   */
  keepRolledUp(onError: (error: Error) => void, { idleMs = ROLL_IDLE_MS, keepAlive = false } = {}): () => void {
    let timer: NodeJS.Timeout | undefined;
    const step = () => {
      if (!this.db.open) return;
      const startMs = performance.now();
      let rolled = 0;
      try {
        rolled = this.rollPending(Date.now(), 1);
      } catch (error) {
        onError(error as Error);
      }
      timer = setTimeout(step, rolled > 0 ? Math.ceil(2 * (performance.now() - startMs)) : idleMs);
      if (!keepAlive) timer.unref();
    };
    timer = setTimeout(step, 0);
    if (!keepAlive) timer.unref();
    return () => clearTimeout(timer);
  }

  private prunedAtMs = 0;

  /** Retention where no recorder runs (audit logs only): at most once an hour per process; null when not due. */
  pruneIfDue(retentionMs: number, nowMs = Date.now()): PruneCounts | null {
    if (nowMs - this.prunedAtMs < 3_600_000) return null;
    this.prunedAtMs = nowMs;
    return this.prune(nowMs - retentionMs);
  }

  /** `work` in one transaction (database.ts); what the roll-ups knew of the rows is read again after it. */
  batch<T>(work: () => T): T {
    this.rollups.forget();
    this.audited = undefined;
    try {
      return this.database.transaction(work);
    } finally {
      this.rollups.forget();
      this.audited = null;
    }
  }

  private anyAudited(): boolean {
    if (this.audited === null) return this.audit().hasRequests();
    return (this.audited ??= this.audit().hasRequests());
  }

  /** One object's writes in (from, to], oldest first. */
  writesOf(key: ObjectKey, fromMs: number, toMs: number, limit: number): (StoredWrite & { seq: number })[] {
    return this.timelines.writesOf(key, fromMs, toMs, limit);
  }

  /** The projection just before `fromMs` (the state band's starting value). */
  projectionBefore(key: ObjectKey, fromMs: number): Record<string, string> | undefined {
    return this.timelines.projectionBefore(key, fromMs);
  }

  /** One object's writes in (from, to] counted into `columns` pixel columns. */
  timeline(key: ObjectKey, fromMs: number, toMs: number, columns: number): ObjectTimeline {
    return this.timelines.timeline(key, fromMs, toMs, columns);
  }

  /** The scope's objects known by the range's start and not written in it, by namespace and name. */
  quietObjects(filter: ObjectFilter, limit: number, offset: number): ReturnType<Ranking["quietObjects"]> {
    return this.ranking.quietObjects(filter, limit, offset);
  }

  /** Many objects' projection segments and routed writes per column, on one time axis. */
  lanes(keys: ObjectKey[], fromMs: number, toMs: number, columns: number): ReturnType<Timelines["lanes"]> {
    return this.timelines.lanes(keys, fromMs, toMs, columns);
  }

  /** One write in full, by its seq or the nearest to a time, with its neighbours in (from, to]. */
  pickWrite(key: ObjectKey, fromMs: number, toMs: number, pick: WritePick): PickedWriteAnswer | undefined {
    return this.timelines.pick(key, fromMs, toMs, pick);
  }
}
