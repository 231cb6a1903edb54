/**
 * The object-write store: objects, their writes with class, writer, source and changed fields, a row
 * per changed field for field-churn ranking, each object's first-seen and last version, and gaps,
 * over one database (database.ts). Its repositories answer the Objects and Field churn rankings
 * (ranking.ts), the timeline, and the audit side (audit-store.ts).
 */
import type { FieldChange } from "../churn/diff";
import type { WriteClass } from "../churn/write-class";
import type { Json } from "../churn/json";
import type { FieldRow, ObjectHistory, ObjectKey, PickedWriteAnswer, StoredWrite } from "../wire/objects";
import { objectKeyText } from "../objects/key";
import { ApiCalls } from "./api-calls";
import { ApiCostQueries } from "./api-cost-query";
import { AuditStore } from "./audit-store";
import { BucketCheckpoints } from "./bucket-checkpoints";
import { StoreDatabase, type StoreTarget } from "./database";
import { PARTITIONED_TABLES } from "./engine/partitions";
import { Changes } from "./changes";
import { dayOf, DayRollups } from "./day-rollups";
import type { RecordedChange } from "../churn/changes";
import { traitsOf, traitsText } from "../churn/conditions";
import { ECHO_TRAITS, noopFlag, WriteJoins, type WriteNear } from "./joins";
import { arrayText } from "./engine/insert-rows";
import { RecorderLeases } from "./leases";
import { WebhookSpoolTable } from "./webhook-spool";
import { Ranking, type ObjectFilter, type RankOptions } from "./ranking";
import { Timelines, type WritePick } from "./timelines";
import { TraitQueries } from "./traits-query";
import { FlapQueries } from "./flaps-query";
import type { ObjectTimeline } from "../objects/timeline";
import { Turns } from "../runtime/turns";
import type { WriteRepository } from "./types";

export type { ObjectFilter } from "./ranking";

/** What one retention pass dropped: audit requests and object writes older than `beforeMs`. */
export interface PruneCounts {
  beforeMs: number;
  requests: number;
  writes: number;
}

/** Taken by a retention pass on PostgreSQL, so that replicas pruning at once take turns. */
const RETENTION_LOCK = 7_420_135_301;
/** Taken by every transaction that stores writes on PostgreSQL (`batch`), before the roll-ups' shared lock. */
const STORING_LOCK = 7_420_135_302;

/** How often the background looks for quarter hours to roll up once all are. */
const ROLL_IDLE_MS = 20_000;

const WRITE_COLUMNS =
  "object_id, ts_ms, rv, class, writer, source, heartbeat, changes, projection, body, verb, subresource, user_agent, code, latency_ms, request_key, prev_rv, traits";
const FIELD_COLUMNS = "INSERT INTO field_changes (write_id, object_id, ts_ms, path, writer)";

export class WriteStore implements WriteRepository {
  private readonly ranking: Ranking;
  /** PostgreSQL's storing transactions, one at a time in this process (`batch`) */
  private readonly storing = new Turns();
  private readonly timelines: Timelines;
  private readonly joins: WriteJoins;
  private readonly changes: Changes;
  private readonly traitQueries: TraitQueries;
  private readonly flapQueries: FlapQueries;
  private auditStore?: AuditStore;
  private callStore?: ApiCalls;
  private bucketStore?: BucketCheckpoints;
  private leaseStore?: RecorderLeases;
  private spoolTable?: WebhookSpoolTable;

  private constructor(
    readonly database: StoreDatabase,
    private readonly rollups: DayRollups,
  ) {
    this.ranking = new Ranking(this.database, this.rollups);
    this.timelines = new Timelines(this.database);
    this.joins = new WriteJoins(this.database);
    this.changes = new Changes(this.database);
    this.traitQueries = new TraitQueries(this.database, this.rollups);
    this.flapQueries = new FlapQueries(this.database);
  }

  /** The store in a SQLite file (a path) or a PostgreSQL database, its schema migrated. */
  static async open(target: StoreTarget | string): Promise<WriteStore> {
    const database = await StoreDatabase.open(target);
    try {
      return new WriteStore(database, await DayRollups.open(database));
    } catch (error) {
      await database.close();
      throw error;
    }
  }

  get waitsOnServer(): boolean {
    // A database replicas share is a server's, each statement a round trip.
    return this.database.engine.sharedByReplicas;
  }

  /** The SQLite connection, for what reads the file directly (tests, the copy to PostgreSQL). */
  get db() {
    return this.database.db;
  }

  close(): Promise<void> {
    return this.database.close();
  }

  private sql() {
    return this.database.sql();
  }

  idOf(key: ObjectKey): Promise<number> {
    return this.database.idOf(key);
  }

  getMeta(key: string): Promise<string | undefined> {
    return this.database.getMeta(key);
  }

  setMeta(key: string, value: string): Promise<void> {
    return this.database.setMeta(key, value);
  }

  sizeBytes(): Promise<number> {
    return this.database.sizeBytes();
  }

  /** Objects ranked by writes in (from, to], one page (ranking.ts). */
  objects(filter: ObjectFilter, limit: number, offset: number, options?: RankOptions): ReturnType<Ranking["objects"]> {
    return this.ranking.objects(filter, limit, offset, options);
  }

  kinds(): Promise<{ cluster: string; group: string; kind: string }[]> {
    return this.ranking.kinds();
  }

  fields(filter: ObjectFilter, limit: number): Promise<FieldRow[]> {
    return this.ranking.fields(filter, limit);
  }

  /** Echoes, no-ops and condition clocks in (from, to] per object, writer, class and traits (traits-query.ts). */
  traitCounts(filter: ObjectFilter): ReturnType<TraitQueries["counts"]> {
    return this.traitQueries.counts(filter);
  }

  /** The condition-clock and echo report over (from, to] (traits-query.ts). */
  traits(filter: ObjectFilter): ReturnType<TraitQueries["answer"]> {
    return this.traitQueries.answer(filter);
  }

  /** Each object's routed changes in (from, to], for flaps and the damping what-if (flaps-query.ts). */
  changeRuns(filter: ObjectFilter, windowMs: number): ReturnType<FlapQueries["runs"]> {
    return this.flapQueries.runs(filter, windowMs);
  }

  /**
   * A burst of watched writes about to be recorded in the current transaction: where audit requests are stored, which of
   * their objects have an audited write near them is asked once (joins.ts), not once per write.
   */
  async expectWatched(writes: readonly { key: ObjectKey; tsMs: number }[]): Promise<void> {
    if (writes.length === 0 || !this.database.inTransaction || !(await this.anyAudited())) return;
    // Each is recorded next: its object is made now if it is new.
    await this.joins.learnAuditedNear(await this.near(writes, async (key) => this.database.cachedIdOf(key) ?? (await this.idOf(key))));
  }

  /** The same for a batch of audited writes, where the recorder stores versions too: which the watch saw, asked once. */
  async expectAudited(writes: readonly { key: ObjectKey; tsMs: number }[]): Promise<void> {
    if (writes.length === 0 || !this.database.inTransaction) return;
    // Some will turn out duplicates or no-ops: no object is made for them.
    await this.joins.learnWatchedNear(await this.near(writes, (key) => this.database.knownIdOf(key)));
  }

  /** Writes with their objects' ids, each object looked up once (a batch's writes are of few objects). */
  private async near(writes: readonly { key: ObjectKey; tsMs: number }[], idOf: (key: ObjectKey) => Promise<number | undefined>): Promise<WriteNear[]> {
    const ids = new Map<string, number | undefined>();
    const near: WriteNear[] = [];
    for (const { key, tsMs } of writes) {
      const text = objectKeyText(key);
      if (!ids.has(text)) ids.set(text, await idOf(key));
      near.push({ objectId: ids.get(text), tsMs });
    }
    return near;
  }

  /**
   * Stores one write and answers its row's id, or, when the other source already stored the same write
   * (joins.ts), joins that row and answers its id with `joined`. `requestKey`: the audit request it
   * came from; `joinable: false` for a write that made no version (answered with the one it had).
   */
  async record(
    key: ObjectKey,
    write: StoredWrite,
    { requestKey, joinable = true }: { requestKey?: string; joinable?: boolean } = {},
  ): Promise<{ id: number; joined: boolean; echo?: boolean }> {
    // Its rows wait for the transaction's next statement: one asked for outside any runs in its own.
    if (!this.database.inTransaction) return this.batch(() => this.record(key, write, { requestKey, joinable }), [write.tsMs]);
    const objectId = this.database.cachedIdOf(key) ?? (await this.idOf(key));
    const audited = write.source === "watch" && (await this.anyAudited());
    const found = !joinable
      ? undefined
      : audited
        ? await this.joins.intoAudited(objectId, write)
        : write.source === "audit"
          ? await this.joins.intoWatched(objectId, write, requestKey)
          : undefined;
    // Audited writes received after the watch saw this version, stored before it came: echoes of it.
    if (audited) await this.echoed(objectId, await this.joins.echoesAfter(objectId, write));
    // Received after the watch saw the version it was answered with: an echo of it, a no-op of its own.
    if (found === "echo") {
      const stored = await this.record(key, { ...write, cls: "no-op", changes: [], heartbeat: false, traits: { echo: true } }, { requestKey, joinable: false });
      if (requestKey) await this.audit().setNoop(requestKey, true, "same-version");
      return { ...stored, echo: true };
    }
    const joined = found;
    // A request received earlier took the watched version from the one joined to it, now an echo of its own.
    if (joined && "parted" in joined && joined.parted)
      await this.echoed(objectId, [{ id: -1, tsMs: joined.parted.tsMs, requestKey: joined.parted.requestKey }]);
    if (joined) {
      await this.rewriteFields(joined.id, objectId, joined.tsMs, write.source === "watch" ? write.changes : undefined, joined.writer);
      // Its change is the recorder's too, by the row's writer.
      if (write.source === "watch") await this.changes.replace(objectId, joined.tsMs, joined.writer, write.change);
      else await this.changes.reattribute(objectId, joined.tsMs, joined.writer);
      if (joined.requestKey)
        await this.audit().setNoop(joined.requestKey, noopFlag(joined.cls), "by" in joined && joined.by === "precondition" ? "watched-successor" : "watch");
      return { id: joined.id, joined: true };
    }
    // (A transaction that did not begin with the roll-ups' lock is refused by `rollups.written`, before any row goes in.)
    await this.database.ensureDays(["writes", "field_changes"], write.tsMs);
    const row = [
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
      traitsText(write.traits ?? {}),
    ];
    // A burst's writes and their fields go in at the transaction's next statement: on PostgreSQL a statement per table,
    // on SQLite back to back. The roll-ups' question first: a statement between two writes would store the first alone.
    await this.rollups.written(write.tsMs);
    const id = await this.database.nextWriteId();
    this.database.insertLater(`INSERT INTO writes (id, ${WRITE_COLUMNS})`, [id, ...row]);
    await this.insertFields(id, objectId, write.tsMs, write.changes, write.writer);
    if (write.change) await this.changes.add(objectId, write.tsMs, write.writer, write.change);
    return { id, joined: false };
  }

  /** Rows found to be echoes after they were stored: their changes go, their requests changed nothing. */
  private async echoed(objectId: number, rows: readonly { id: number; tsMs: number; requestKey: string | null }[]): Promise<void> {
    for (const row of rows) {
      await this.sql().run("DELETE FROM field_changes WHERE ts_ms = ? AND object_id = ? AND write_id = ?", [row.tsMs, objectId, row.id]);
      await this.changes.replace(objectId, row.tsMs, "", undefined);
      if (row.requestKey) await this.audit().setNoop(row.requestKey, true, "same-version");
      await this.rollups.written(row.tsMs);
    }
  }

  private async insertFields(id: number, objectId: number, tsMs: number, changes: FieldChange[], writer: string): Promise<void> {
    for (const change of changes) await this.database.insertRow(FIELD_COLUMNS, [id, objectId, tsMs, change.path, writer]);
  }

  /** A row's field rows written again: with `changes`, those; without, its own with the row's writer now. */
  private async rewriteFields(id: number, objectId: number, tsMs: number, changes: FieldChange[] | undefined, writer: string): Promise<void> {
    const sql = this.sql();
    if (changes === undefined) {
      await sql.run("UPDATE field_changes SET writer = ? WHERE ts_ms = ? AND object_id = ? AND write_id = ?", [writer, tsMs, objectId, id]);
    } else {
      await sql.run("DELETE FROM field_changes WHERE ts_ms = ? AND object_id = ? AND write_id = ?", [tsMs, objectId, id]);
      await this.insertFields(id, objectId, tsMs, changes, writer);
    }
    await this.rollups.written(tsMs);
  }

  /**
   * A stored write compared again with the version before it, which audit ingest learnt of only later
   * (webhook batches can arrive out of order): its class, changes and projection. Gone (pruned), joined by the
   * recorder, which saw every version in order, or no longer its request's row (joined into the version the watch
   * saw, its id given to a later row), or an echo (answered with a version that was there before it): nothing. Answers
   * whether it changed.
   */
  async reclassify(
    { id, requestKey }: { id: number; requestKey: string },
    write: Pick<StoredWrite, "cls" | "heartbeat" | "changes" | "projection" | "change" | "traits">,
  ): Promise<boolean> {
    const row = await this.sql().get<{ objectId: number; tsMs: number; writer: string }>(
      `UPDATE writes SET class = ?, heartbeat = ?, changes = ?, projection = ?, traits = ? WHERE id = ? AND request_key = ? AND source = 'audit' AND (traits IS NULL OR traits <> ?) RETURNING object_id AS "objectId", ts_ms AS "tsMs", writer`,
      [
        write.cls,
        write.heartbeat ? 1 : 0,
        JSON.stringify(write.changes),
        JSON.stringify(write.projection),
        traitsText(write.traits ?? {}),
        id,
        requestKey,
        ECHO_TRAITS,
      ],
    );
    if (!row) return false;
    await this.rewriteFields(id, row.objectId, row.tsMs, write.changes, row.writer);
    // What the write changed in a workload's template (or a GitOps revision) follows its new comparison too.
    await this.changes.replace(row.objectId, row.tsMs, row.writer, write.change);
    return true;
  }

  /**
   * Audited writes whose class a later request of the same object decided (a Metadata-level log's preconditions):
   * no-op, or back to unknown. Only such rows change (on PostgreSQL in one statement, where each would be a round
   * trip); answers the requests whose write did.
   */
  async reclassifyRequests(requests: readonly { requestKey: string; cls: "no-op" | "unknown" }[]): Promise<Set<string>> {
    type Changed = { requestKey: string; tsMs: number };
    const changed: Changed[] = [];
    // Only an audited write whose class the rule decides, and only to another class.
    const rule = (cls: string) => `source = 'audit' AND class IN ('no-op', 'unknown') AND class <> ${cls}`;
    const returning = `RETURNING request_key AS "requestKey", ts_ms AS "tsMs"`;
    if (requests.length === 1) {
      const [{ requestKey, cls }] = requests;
      changed.push(
        ...(await this.sql().all<Changed>(`UPDATE writes SET class = ? WHERE request_key = ? AND ${rule("?")} ${returning}`, [cls, requestKey, cls])),
      );
    } else if (requests.length > 1) {
      const set = this.database.engine.rowsTable(
        "v",
        [
          ["request", "text"],
          ["cls", "text"],
        ],
        requests.map((r) => [r.requestKey, r.cls]),
      );
      changed.push(
        ...(await this.sql().all<Changed>(
          `UPDATE writes SET class = v.cls FROM ${set.sql} WHERE writes.request_key = v.request AND ${rule("v.cls")} ${returning}`,
          set.params,
        )),
      );
    }
    for (const { tsMs } of changed) await this.rollups.written(tsMs);
    return new Set(changed.map((row) => row.requestKey));
  }

  /** A Metadata-level write joined to, or parted from, the watched version it made (joins.ts); the class it now has as that version, if it is one. */
  async placeByPrecondition(requestKey: string, precondition: string, last: boolean, cls: "no-op" | "unknown"): Promise<WriteClass | null | undefined> {
    const placed = await this.joins.placeByPrecondition(requestKey, precondition, last, cls);
    for (const tsMs of placed?.tsMs ?? []) await this.rollups.written(tsMs);
    return placed?.cls;
  }

  /** The projection of an object as first seen (a list, or a snapshot's first version), before any recorded write. */
  async recordFirstSeen(key: ObjectKey, tsMs: number, projection: Record<string, string>, body?: Json, baseline?: RecordedChange): Promise<void> {
    const objectId = await this.idOf(key);
    // An older log read later moves it back: it is where the object's known history starts.
    await this.sql().run(
      "INSERT INTO first_seen (object_id, ts_ms, projection, body) VALUES (?, ?, ?, ?) ON CONFLICT (object_id) DO UPDATE SET ts_ms = excluded.ts_ms, projection = excluded.projection, body = excluded.body WHERE excluded.ts_ms < first_seen.ts_ms",
      [objectId, tsMs, JSON.stringify(projection), body === undefined ? null : JSON.stringify(body)],
    );
    // Since its template was last written, when the object says (managedFields); else since it was first seen.
    // A snapshot's objects are first seen at 0 (before its range): only the object can say since when.
    if (baseline) await this.changes.baseline(objectId, baseline.sinceMs !== undefined ? Math.min(tsMs || Infinity, baseline.sinceMs) : tsMs, baseline);
  }

  /** Recorded changes in (from, to], oldest first (changes.ts). */
  changesBetween(fromMs: number, toMs: number, limit: number, nearMs?: number): ReturnType<Changes["between"]> {
    return this.changes.between(fromMs, toMs, limit, nearMs);
  }

  /** The busiest writers' writes per step (changes.ts). */
  writerRates(fromMs: number, toMs: number, stepMs: number, maxWriters: number): ReturnType<Changes["writerRates"]> {
    return this.changes.writerRates(fromMs, toMs, stepMs, maxWriters);
  }

  /** Each object's latest change or baseline at `atMs` (changes.ts). */
  changesLatestAt(atMs: number, limit: number): ReturnType<Changes["latestAt"]> {
    return this.changes.latestAt(atMs, limit);
  }

  /**
   * Every object written in (fromMs, toMs] with what it takes to rebuild its versions: its first-seen
   * body and all its writes up to toMs, oldest first. At most `maxWrites` writes, else null.
   */
  async histories(fromMs: number, toMs: number, maxWrites: number): Promise<ObjectHistory[] | null> {
    const sql = this.sql();
    const ids = (await sql.all<{ id: number }>("SELECT DISTINCT object_id AS id FROM writes WHERE ts_ms > ? AND ts_ms <= ? ORDER BY id", [fromMs, toMs])).map(
      (r) => r.id,
    );
    const out: ObjectHistory[] = [];
    let total = 0;
    for (const id of ids) {
      const o = (await sql.get(
        `SELECT o.cluster, o.grp, o.kind, o.namespace, o.name, f.ts_ms AS "seenMs", f.body AS "seenBody" FROM objects o LEFT JOIN first_seen f ON f.object_id = o.id WHERE o.id = ?`,
        [id],
      )) as {
        cluster: string;
        grp: string;
        kind: string;
        namespace: string;
        name: string;
        seenMs: number | null;
        seenBody: string | null;
      };
      const rows = await sql.all<{ ts_ms: number; class: WriteClass; writer: string; changes: string; body: string | null; traits: string | null }>(
        "SELECT ts_ms, class, writer, changes, body, traits FROM writes WHERE object_id = ? AND ts_ms <= ? ORDER BY ts_ms, id",
        [id, toMs],
      );
      const writes = rows.map((w) => ({
        tsMs: w.ts_ms,
        cls: w.class,
        writer: w.writer,
        changes: JSON.parse(w.changes) as FieldChange[],
        body: w.body === null ? undefined : (JSON.parse(w.body) as Json),
        ...(w.traits === null ? {} : { traits: traitsOf(w.traits) }),
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
  async latest(key: ObjectKey): Promise<{ resourceVersion: string; body: string | null } | undefined> {
    const row = await this.sql().get<{ rv: string; body: string | null }>(
      "SELECT l.rv, l.body FROM latest l JOIN objects o ON o.id = l.object_id WHERE o.cluster = ? AND o.grp = ? AND o.kind = ? AND o.namespace = ? AND o.name = ?",
      [key.cluster, key.group, key.kind, key.namespace, key.name],
    );
    return row ? { resourceVersion: row.rv, body: row.body } : undefined;
  }

  /** The version chain saves each object's last version once per batch, so a burst's go in one statement on PostgreSQL. */
  async setLatest(key: ObjectKey, resourceVersion: string, body: string | null): Promise<void> {
    await this.database.insertRow(
      "INSERT INTO latest (object_id, rv, body)",
      [await this.idOf(key), resourceVersion, body],
      " ON CONFLICT (object_id) DO UPDATE SET rv = excluded.rv, body = excluded.body",
    );
  }

  /** The last version the recorder saw of each object of a kind on a cluster still alive (a cluster's FlowSchemas, say). */
  async liveBodies(cluster: string, group: string, kind: string): Promise<Json[]> {
    const rows = await this.sql().all<{ body: string }>(
      "SELECT l.body FROM latest l JOIN objects o ON o.id = l.object_id WHERE o.cluster = ? AND o.grp = ? AND o.kind = ? AND l.body IS NOT NULL ORDER BY o.id",
      [cluster, group, kind],
    );
    return rows.map((r) => JSON.parse(r.body) as Json);
  }

  /** Objects of a kind on a cluster that the recorder last saw alive. */
  liveKeys(cluster: string, group: string, kind: string): Promise<ObjectKey[]> {
    return this.sql().all<ObjectKey>(
      'SELECT o.cluster, o.grp AS "group", o.kind, o.namespace, o.name FROM latest l JOIN objects o ON o.id = l.object_id WHERE o.cluster = ? AND o.grp = ? AND o.kind = ? AND l.body IS NOT NULL ORDER BY o.id',
      [cluster, group, kind],
    );
  }

  async openGap(cluster: string, profile: string, fromMs: number, reason: string): Promise<void> {
    const open = await this.sql().get("SELECT 1 AS open FROM gaps WHERE cluster = ? AND profile = ? AND to_ms IS NULL", [cluster, profile]);
    if (!open)
      await this.sql().run("INSERT INTO gaps (cluster, profile, from_ms, to_ms, reason) VALUES (?, ?, ?, NULL, ?)", [cluster, profile, fromMs, reason]);
  }

  async closeGap(cluster: string, profile: string, toMs: number): Promise<void> {
    await this.sql().run("UPDATE gaps SET to_ms = ? WHERE cluster = ? AND profile = ? AND to_ms IS NULL", [toMs, cluster, profile]);
  }

  async gaps(fromMs: number, toMs: number): Promise<{ cluster: string; profile: string; fromMs: number; toMs: number | null; reason: string }[]> {
    return (
      await this.sql().all<{ cluster: string; profile: string; from_ms: number; to_ms: number | null; reason: string }>(
        "SELECT cluster, profile, from_ms, to_ms, reason FROM gaps WHERE from_ms <= ? AND (to_ms IS NULL OR to_ms > ?) ORDER BY from_ms",
        [toMs, fromMs],
      )
    ).map((g) => ({
      cluster: g.cluster,
      profile: g.profile,
      fromMs: g.from_ms,
      toMs: g.to_ms,
      reason: g.reason,
    }));
  }

  /** Drops writes (and audit requests, and bucket checkpoints) older than `beforeMs` (retention); objects and their last versions stay. */
  prune(beforeMs: number): Promise<PruneCounts> {
    return this.batch(async () => {
      // Replicas prune in turn: one drops a day, the next finds it gone.
      await this.database.engine.lockUntilCommit(this.sql(), RETENTION_LOCK);
      const removed = new Map<string, number>();
      // PostgreSQL drops whole days; SQLite deletes the rows.
      for (const table of PARTITIONED_TABLES) removed.set(table, await this.database.engine.removeBefore(this.sql(), table, beforeMs));
      this.database.forgetPartitions();
      // A bucket's objects from before retention are skipped by their time alone: their checkpoints go too.
      await this.buckets().prune(beforeMs);
      await this.rollups.pruned(beforeMs);
      await this.changes.pruned(beforeMs);
      await this.apiCalls().prune(beforeMs, Date.now());
      return { beforeMs, requests: removed.get("audit_requests")!, writes: removed.get("writes")! };
    });
  }

  /** The audit side of this store (requests, last audited versions). */
  audit(): AuditStore {
    return (this.auditStore ??= new AuditStore(this.database));
  }

  /** Every API request counted per client (reads and watches too), from the audit logs. */
  apiCalls(): ApiCalls {
    return (this.callStore ??= new ApiCalls(this.database));
  }

  /** The API cost view's questions of those counts. */
  apiCost(): ApiCostQueries {
    return new ApiCostQueries(this.database);
  }

  /** The audit webhook's spool in the database (PostgreSQL). */
  webhookSpool(): WebhookSpoolTable {
    return (this.spoolTable ??= new WebhookSpoolTable(this.database));
  }

  /** Which process records each cluster. */
  leases(): RecorderLeases {
    return (this.leaseStore ??= new RecorderLeases(this.database));
  }

  /** What each audit bucket source read, and its polls. */
  buckets(): BucketCheckpoints {
    return (this.bucketStore ??= new BucketCheckpoints(this.database));
  }

  /** Rolls up to `maxSlices` quarter hours of the days that are over, for the Objects ranking; returns how many. */
  rollPending(nowMs = Date.now(), maxSlices = Infinity): Promise<number> {
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
    let stopped = false;
    const step = async () => {
      if (stopped || !this.database.isOpen) return;
      const startMs = performance.now();
      let rolled = 0;
      try {
        rolled = await this.rollPending(Date.now(), 1);
      } catch (error) {
        if (this.database.isOpen) onError(error as Error);
      }
      if (stopped) return;
      timer = setTimeout(step, rolled > 0 ? Math.ceil(2 * (performance.now() - startMs)) : idleMs);
      if (!keepAlive) timer.unref();
    };
    timer = setTimeout(step, 0);
    if (!keepAlive) timer.unref();
    return () => {
      stopped = true;
      clearTimeout(timer);
    };
  }

  private prunedAtMs = 0;

  /** Retention where no recorder runs (audit logs only): at most once an hour per process; null when not due. */
  async pruneIfDue(retentionMs: number, nowMs = Date.now()): Promise<PruneCounts | null> {
    if (nowMs - this.prunedAtMs < 3_600_000) return null;
    this.prunedAtMs = nowMs;
    return this.prune(nowMs - retentionMs);
  }

  /**
   * `work` in one transaction (database.ts). `timesMs`: when the rows it stores were written, so that PostgreSQL's day
   * partitions for them are made first, before the transaction writes anything (see DayRollups.sharing).
   */
  batch<T>(work: () => Promise<T>, timesMs: readonly number[] = []): Promise<T> {
    const shared = this.database.engine.sharedByReplicas;
    // On PostgreSQL, one storing transaction at a time across replicas: the recorder and audit ingest each look for the
    // other's row of a write before adding their own (joins.ts), and a transaction still open would hide it. Taken with
    // the roll-ups' lock as the transaction begins, in one round trip.
    const locks = shared ? `SELECT pg_advisory_xact_lock(${STORING_LOCK}), ${DayRollups.SHARING}` : undefined;
    const run = () =>
      this.database.transaction(async () => {
        if (shared) {
          this.rollups.shared();
          await this.database.ensureDays(PARTITIONED_TABLES, ...timesMs);
          await this.askFirst(timesMs);
        }
        return work();
      }, locks);
    // And one at a time in this process, waiting here rather than on a connection: a storing transaction waits for
    // the lock holding one, and several streams' would leave the pool none for the pages. (A batch asked for inside a
    // transaction is part of it.)
    return shared && !this.database.inTransaction ? this.storing.run(run) : run();
  }

  /**
   * A storing transaction's first questions on PostgreSQL, in one round trip instead of one each: whether any audit
   * request is stored, and how far the days of the writes it stores are rolled up.
   */
  private async askFirst(timesMs: readonly number[]): Promise<void> {
    if (timesMs.length === 0) return;
    const days = [...new Set(timesMs.map(dayOf))];
    const rows = await this.sql().all<{ day: number | null; slices: number | null; audited: number | null }>(
      `SELECT NULL AS day, NULL AS slices, ${AuditStore.ANY_REQUEST_SQL} AS audited
       UNION ALL SELECT day, slices, NULL FROM (${DayRollups.ROLLED_DAYS_SQL}) AS rolled`,
      [arrayText(days), arrayText(days)],
    );
    this.auditedKnown()!.audited = rows.some((row) => row.audited === 1);
    this.rollups.learnRolled(
      days,
      rows.filter((row) => row.day !== null).map((row) => ({ day: row.day!, slices: row.slices! })),
    );
  }

  /** What the current transaction knows of whether any audit request is stored; undefined outside one. */
  private auditedKnown() {
    return this.database.transactionValue(this, () => ({ audited: undefined as boolean | undefined }));
  }

  /** Whether any audit request is stored, asked once per transaction: only then can a watched write have been audited first. */
  private async anyAudited(): Promise<boolean> {
    const known = this.auditedKnown();
    if (!known) return this.audit().hasRequests();
    return (known.audited ??= await this.audit().hasRequests());
  }

  /** One object's writes in (from, to], oldest first. */
  writesOf(key: ObjectKey, fromMs: number, toMs: number, limit: number): Promise<(StoredWrite & { seq: number })[]> {
    return this.timelines.writesOf(key, fromMs, toMs, limit);
  }

  /** The projection just before `fromMs` (the state band's starting value). */
  projectionBefore(key: ObjectKey, fromMs: number): Promise<Record<string, string> | undefined> {
    return this.timelines.projectionBefore(key, fromMs);
  }

  /** One object's writes in (from, to] counted into `columns` pixel columns. */
  timeline(key: ObjectKey, fromMs: number, toMs: number, columns: number): Promise<ObjectTimeline> {
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
  pickWrite(key: ObjectKey, fromMs: number, toMs: number, pick: WritePick): Promise<PickedWriteAnswer | undefined> {
    return this.timelines.pick(key, fromMs, toMs, pick);
  }
}
