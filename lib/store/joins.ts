/**
 * One write, one row: a write that both the watch recorder and an audit log saw is stored once, whichever
 * arrives first. They are the same write when they name the same object and the version it made (its
 * resourceVersion; a delete's watch event carries `deleted@<version>`), or, for a delete, which an audit
 * log answers with a Status that has no version, when both say the object was deleted within a minute.
 * A request received after the watch saw the version it was answered with did not make it: it is an echo (the API
 * server answered with the version the object had), a no-op of its own, whichever of the two arrives first; of the
 * requests answered with one version before the watch saw it, the earliest made it.
 * The row keeps the recorder's class and diff (it saw every version in order) and the audit log's request
 * (verb, subresource, user agent, code, latency, the request's key), whichever came first; its writer is
 * the field manager, or the audit's user where managedFields named none.
 *
 * An audit log without bodies (Metadata level) names no version a write made, only the version it was sent against
 * (its precondition). Of the writes sent against one version, only the last can have changed the object, and the
 * version the watch saw follow that one is what it made: that write and that watched version are one row. Which
 * write is the last is known only once the next write of the object is, so a row joined this way can be parted again.
 */
import type { StoreConnection } from "./types";
import type { StoredWrite } from "../wire/objects";
import { traitsText } from "../churn/conditions";

/** What an echo's row carries (churn/conditions.ts). */
export const ECHO_TRAITS = traitsText({ echo: true })!;

/** How far apart the recorder and an audit log may place the same write: the watch event's arrival against the request's time. */
export const SAME_WRITE_MS = 60_000;

/** What a write's class says of its audit request: changed nothing, changed something, or not known. */
export const noopFlag = (cls: StoredWrite["cls"] | undefined): boolean | null =>
  cls === "no-op" ? true : cls === "routed" || cls === "unrouted" ? false : null;

/**
 * How far apart the recorder's clock and the API server's may be: a request received more than this after the watch
 * saw the version it was answered with did not make it (its maker was received before the version was stored).
 */
export const CLOCKS_APART_MS = 1_000;

/** A request parted from the watched version it had joined: an echo now, in a row of its own at its time. */
export interface Parted {
  requestKey: string;
  tsMs: number;
}

/** A row the join changed: the caller rewrites its field rows and tells the roll-ups. */
export interface JoinedRow {
  id: number;
  tsMs: number;
  writer: string;
  /** the audit request the row now carries, whose no-op flag follows the row's class */
  requestKey: string | null;
  cls: StoredWrite["cls"];
}

/** The version a write made, as both sources name it (`deleted@<version>` is the watch's delete at that version). */
/** What a joined row answers with. */
const JOINED = `id, ts_ms AS "tsMs", writer, request_key AS "requestKey", class AS cls`;

/** A write about to be stored: its object's id (none when the object was never stored) and its time. */
export interface WriteNear {
  objectId: number | undefined;
  tsMs: number;
}

/** The objects with rows a write could join within SAME_WRITE_MS of its time, for writes in (fromMs, toMs) widened by that. */
interface ObjectsNear {
  fromMs: number;
  toMs: number;
  objects: Set<number>;
}

/** Whether what was learnt says no row of the object is near enough to `tsMs` to be the same write. */
const noneNear = (near: ObjectsNear | undefined, objectId: number, tsMs: number): boolean =>
  near !== undefined && tsMs - SAME_WRITE_MS >= near.fromMs && tsMs + SAME_WRITE_MS <= near.toMs && !near.objects.has(objectId);

const madeVersion = (rv: string | undefined): string | undefined => (rv?.startsWith("deleted@") ? rv.slice("deleted@".length) : rv);

export class WriteJoins {
  constructor(private readonly connection: StoreConnection) {}

  private sql() {
    return this.connection.sql();
  }

  /**
   * Which objects of a burst of watched writes have an audited write near the burst's times, asked once for the
   * burst in its transaction: a watched write of any other object joins none (both of `intoAudited`'s ways look for
   * an audited row of its object within SAME_WRITE_MS), and `intoAudited` answers so without a statement of its own,
   * which on PostgreSQL is a round trip that also stores the burst's waiting rows a write at a time. Joining only turns
   * audited rows into watched ones, so what this learnt stays true for the rest of the transaction.
   */
  async learnAuditedNear(writes: readonly WriteNear[]): Promise<void> {
    const known = this.transactionKnows();
    if (known) known.audited = await this.objectsNear("source = 'audit'", writes);
  }

  /**
   * The same for a batch of audited writes: which of their objects have a watched version near them (`intoWatched`
   * looks for nothing else: one to join, or one the write echoes). Joining and parting leave a watched row watched.
   */
  async learnWatchedNear(writes: readonly WriteNear[]): Promise<void> {
    const known = this.transactionKnows();
    if (known) known.watched = await this.objectsNear("source = 'watch'", writes);
  }

  private async objectsNear(rows: string, writes: readonly WriteNear[]): Promise<ObjectsNear | undefined> {
    if (writes.length === 0) return undefined;
    const times = writes.map((w) => w.tsMs);
    const [fromMs, toMs] = [Math.min(...times) - SAME_WRITE_MS, Math.max(...times) + SAME_WRITE_MS];
    // An object not stored yet has no rows to join.
    const ids = [...new Set(writes.flatMap((w) => (w.objectId === undefined ? [] : [w.objectId])))];
    const found = ids.length === 0 ? [] : await this.objectsWritten(ids, fromMs, toMs, rows);
    return { fromMs, toMs, objects: new Set(found.map((row) => row.id)) };
  }

  /** Which of the objects `ids` have rows of `rows` written in [fromMs, toMs]. */
  private objectsWritten(ids: readonly number[], fromMs: number, toMs: number, rows: string): Promise<{ id: number }[]> {
    const among = this.connection.engine.inList("object_id", "bigint", ids);
    return this.sql().all<{ id: number }>(`SELECT DISTINCT object_id AS id FROM writes WHERE ${among.sql} AND ts_ms BETWEEN ? AND ? AND ${rows}`, [
      among.param,
      fromMs,
      toMs,
    ]);
  }

  /** What the current transaction learnt of the rows a write could join (undefined outside one). */
  private transactionKnows() {
    return this.connection.transactionValue(this, () => ({ audited: undefined as ObjectsNear | undefined, watched: undefined as ObjectsNear | undefined }));
  }

  /**
   * An audited write that the recorder already stored: the audit's request joins the recorder's row; or, received after
   * the watch saw the version it was answered with, or after the request already joined to it, it is an echo of that
   * version (`"echo"`). Received before the request already joined (a late webhook batch), it takes the row, and that
   * request becomes an echo of its own (`parted`).
   */
  async intoWatched(objectId: number, write: StoredWrite, requestKey: string | undefined): Promise<(JoinedRow & { parted?: Parted }) | "echo" | undefined> {
    const version = madeVersion(write.resourceVersion) ?? null;
    const isDelete = write.cls === "delete" ? 1 : 0;
    // A create logged without its answer (Metadata level): the object's one create the watch saw within the minute.
    const isBlindCreate = write.cls === "create" && version === null ? 1 : 0;
    if (version === null && !isDelete && !isBlindCreate) return undefined;
    if (noneNear(this.transactionKnows()?.watched, objectId, write.tsMs)) return undefined;
    let parted: Parted | undefined;
    if (version !== null && !isDelete && write.cls !== "create") {
      const seen = await this.sql().get<{ id: number; tsMs: number; requestKey: string | null; joinedMs: number | null }>(
        `SELECT w.id, w.ts_ms AS "tsMs", w.request_key AS "requestKey", a.ts_ms AS "joinedMs" FROM writes w LEFT JOIN audit_requests a ON a.request_key = w.request_key
         WHERE w.object_id = ? AND w.ts_ms BETWEEN ? AND ? AND w.source = 'watch' AND w.rv = ? ORDER BY w.ts_ms LIMIT 1`,
        [objectId, write.tsMs - SAME_WRITE_MS, write.tsMs + SAME_WRITE_MS, version],
      );
      if (seen && write.tsMs > seen.tsMs + CLOCKS_APART_MS) return "echo";
      if (seen?.requestKey) {
        if (seen.joinedMs === null || seen.joinedMs <= write.tsMs) return "echo";
        parted = await this.part(seen.id, seen.requestKey, seen.joinedMs);
      }
    }
    const row = await this.sql().get<{ id: number }>(
      `SELECT id FROM writes WHERE object_id = ? AND ts_ms BETWEEN ? AND ? AND source = 'watch' AND verb IS NULL
         AND (rv = ? OR rv = 'deleted@' || ? OR (? = 1 AND class = 'delete') OR (? = 1 AND class = 'create'))
       ORDER BY COALESCE(rv = ? OR rv = 'deleted@' || ?, FALSE) DESC, abs(ts_ms - ?) LIMIT 1`,
      [objectId, write.tsMs - SAME_WRITE_MS, write.tsMs + SAME_WRITE_MS, version, version, isDelete, isBlindCreate, version, version, write.tsMs],
    );
    if (!row) return undefined;
    const r = write.request;
    const joined = (await this.sql().get<JoinedRow>(
      `UPDATE writes SET verb = ?, subresource = ?, user_agent = ?, code = ?, latency_ms = ?, request_key = ?, writer = CASE WHEN writer = 'unknown' THEN ? ELSE writer END
       WHERE id = ? RETURNING ${JOINED}`,
      [r?.verb ?? null, r?.subresource ?? null, r?.userAgent ?? null, r?.code ?? null, r?.latencyMs ?? null, requestKey ?? null, write.writer, row.id],
    ))!;
    return parted ? { ...joined, parted } : joined;
  }

  /**
   * A request joined to a watched version that another, received earlier, turned out to have made: it gets a row of its
   * own at its own time, an echo (no-op) of that version, and the watched row waits for the request that made it.
   */
  private async part(watchedId: number, requestKey: string, tsMs: number): Promise<Parted> {
    const sql = this.sql();
    const usr = (await sql.get<{ usr: string }>("SELECT usr FROM audit_requests WHERE request_key = ?", [requestKey]))!.usr;
    await this.connection.ensureDays(["writes"], tsMs);
    await sql.run(
      `INSERT INTO writes (id, object_id, ts_ms, rv, class, writer, source, heartbeat, changes, projection, verb, subresource, user_agent, code, latency_ms, request_key, traits)
       SELECT CAST(? AS BIGINT), object_id, CAST(? AS BIGINT), rv, 'no-op', CAST(? AS TEXT), 'audit', 0, '[]', projection, verb, subresource, user_agent, code, latency_ms, request_key, CAST(? AS TEXT) FROM writes WHERE id = ?`,
      [await this.connection.nextWriteId(), tsMs, usr, ECHO_TRAITS, watchedId],
    );
    await sql.run("UPDATE writes SET verb = NULL, subresource = NULL, user_agent = NULL, code = NULL, latency_ms = NULL, request_key = NULL WHERE id = ?", [
      watchedId,
    ]);
    return { requestKey, tsMs };
  }

  /**
   * A watched version that an audit log already stored: the recorder's class and diff join the audit's row. `by`:
   * the version the write made, or the precondition of the last write sent against the version this one followed.
   */
  async intoAudited(objectId: number, write: StoredWrite): Promise<(JoinedRow & { by: "version" | "precondition" }) | undefined> {
    if (noneNear(this.transactionKnows()?.audited, objectId, write.tsMs)) return undefined;
    const version = madeVersion(write.resourceVersion) ?? null;
    const isDelete = write.cls === "delete" ? 1 : 0;
    // A delete by the nearest audited delete (or the write whose version it removed); any other version by the earliest
    // audited write that answered with it (it made it; later ones answered with it unchanged).
    const isCreate = write.cls === "create" ? 1 : 0;
    // A create also by an audited create logged without its answer (Metadata level) within the minute.
    // A request received after the watch saw its version did not make it (an echo, which `echoesAfter` tells so).
    const byVersion = await this.sql().get<{ id: number }>(
      `SELECT id FROM writes WHERE object_id = ? AND ts_ms BETWEEN ? AND ? AND source = 'audit'
         AND CASE WHEN ? = 1 THEN class = 'delete' OR rv = ? ELSE (rv = ? OR (? = 1 AND rv IS NULL AND class = 'create')) AND class <> 'delete' AND ts_ms <= CAST(? AS BIGINT) + ${CLOCKS_APART_MS} END
       ORDER BY CASE WHEN ? = 1 THEN abs(ts_ms - ?) ELSE ts_ms END, id LIMIT 1`,
      [objectId, write.tsMs - SAME_WRITE_MS, write.tsMs + SAME_WRITE_MS, isDelete, version, version, isCreate, write.tsMs, isDelete, write.tsMs],
    );
    const byPrecondition = byVersion || write.previousVersion === undefined || isDelete ? undefined : await this.lastSentAgainst(objectId, write);
    const row = byVersion ?? byPrecondition;
    if (!row) return undefined;
    const joined = (await this.sql().get<JoinedRow>(
      `UPDATE writes SET class = ?, heartbeat = ?, changes = ?, projection = ?, body = ?, traits = ?, rv = ?, prev_rv = ?, source = 'watch', writer = CASE WHEN ? = 'unknown' THEN writer ELSE ? END
       WHERE id = ? RETURNING ${JOINED}`,
      [
        write.cls,
        write.heartbeat ? 1 : 0,
        JSON.stringify(write.changes),
        JSON.stringify(write.projection),
        write.body === undefined ? null : JSON.stringify(write.body),
        traitsText(write.traits ?? {}),
        write.resourceVersion ?? null,
        write.previousVersion ?? null,
        write.writer,
        write.writer,
        row.id,
      ],
    ))!;
    return { ...joined, by: byVersion ? "version" : "precondition" };
  }

  /**
   * Audited writes of a watched version's object answered with that version but received after the watch saw it: echoes,
   * stored before the watch's row came (each had been compared with an older version). Made no-ops with their changes
   * gone; answers them.
   */
  async echoesAfter(objectId: number, write: StoredWrite): Promise<{ id: number; tsMs: number; requestKey: string | null }[]> {
    const version = write.resourceVersion;
    if (version === undefined || version.startsWith("deleted@") || write.cls === "delete") return [];
    if (noneNear(this.transactionKnows()?.audited, objectId, write.tsMs)) return [];
    return this.sql().all<{ id: number; tsMs: number; requestKey: string | null }>(
      `UPDATE writes SET class = 'no-op', changes = '[]', traits = ?, heartbeat = 0 WHERE object_id = ? AND ts_ms > CAST(? AS BIGINT) + ${CLOCKS_APART_MS} AND ts_ms <= ? AND source = 'audit' AND rv = ?
         AND (class <> 'no-op' OR traits IS NULL OR traits <> ?) RETURNING id, ts_ms AS "tsMs", request_key AS "requestKey"`,
      [ECHO_TRAITS, objectId, write.tsMs, write.tsMs + SAME_WRITE_MS, version, ECHO_TRAITS],
    );
  }

  /**
   * The audited write that made a watched version by its precondition: the last one sent against the version this
   * one followed, when the object's next successful request (if any is known yet) was sent against another version.
   * After a request with no precondition (a patch) either could have made it: none is chosen.
   */
  private async lastSentAgainst(objectId: number, write: StoredWrite): Promise<{ id: number } | undefined> {
    const candidate = await this.sql().get<{
      id: number;
      cluster: string;
      grp: string;
      resource: string;
      namespace: string;
      name: string;
      orderUs: number;
      requestId: number;
    }>(
      `SELECT w.id, a.cluster, a.grp, a.resource, a.namespace, a.name, a.order_us AS "orderUs", a.id AS "requestId" FROM writes w JOIN audit_requests a ON a.request_key = w.request_key
       WHERE w.object_id = ? AND w.ts_ms BETWEEN ? AND ? AND w.source = 'audit' AND w.rv IS NULL AND w.class NOT IN ('create', 'delete') AND a.precondition = ?
       ORDER BY a.order_us DESC, a.id DESC LIMIT 1`,
      [objectId, write.tsMs - SAME_WRITE_MS, write.tsMs + SAME_WRITE_MS, write.previousVersion ?? null],
    );
    if (!candidate) return undefined;
    const next = await this.sql().get<{ precondition: string | null }>(
      `SELECT precondition FROM audit_requests WHERE cluster = ? AND grp = ? AND resource = ? AND namespace = ? AND name = ? AND (code = 0 OR code BETWEEN 200 AND 299)
         AND (order_us > ? OR (order_us = ? AND id > ?)) ORDER BY order_us, id LIMIT 1`,
      [candidate.cluster, candidate.grp, candidate.resource, candidate.namespace, candidate.name, candidate.orderUs, candidate.orderUs, candidate.requestId],
    );
    return next === undefined || (next.precondition !== null && next.precondition !== write.previousVersion) ? candidate : undefined;
  }

  /**
   * Where a Metadata-level write belongs once the writes after it are known: joined to the version the watch saw
   * follow its precondition when it is the last write sent against that version (`last`), else a row of its own
   * (parted from that version if it was joined to it). `cls`: its own row's class. Answers the class of the
   * watched version it now is, or null for a row of its own; undefined when it has no row (an unprofiled kind).
   */
  async placeByPrecondition(
    requestKey: string,
    precondition: string,
    last: boolean,
    cls: "no-op" | "unknown",
  ): Promise<{ cls: StoredWrite["cls"] | null; tsMs: number[] } | undefined> {
    const sql = this.sql();
    const own = await sql.get<{ id: number; objectId: number; tsMs: number; source: string }>(
      `SELECT id, object_id AS "objectId", ts_ms AS "tsMs", source FROM writes WHERE request_key = ?`,
      [requestKey],
    );
    if (!own) return undefined;
    if (own.source === "watch") {
      const watched = (await sql.get<{ cls: StoredWrite["cls"] }>("SELECT class AS cls FROM writes WHERE id = ?", [own.id]))!;
      if (last) return { cls: watched.cls, tsMs: [] };
      // Parted: the request gets a row of its own again, at its own time; the watched version waits for the write that made it.
      const request = (await sql.get<{ tsMs: number; usr: string }>(`SELECT ts_ms AS "tsMs", usr FROM audit_requests WHERE request_key = ?`, [requestKey]))!;
      await this.connection.ensureDays(["writes"], request.tsMs);
      await sql.run(
        `INSERT INTO writes (id, object_id, ts_ms, rv, class, writer, source, heartbeat, changes, projection, verb, subresource, user_agent, code, latency_ms, request_key)
         SELECT CAST(? AS BIGINT), object_id, CAST(? AS BIGINT), NULL, CAST(? AS TEXT), CAST(? AS TEXT), 'audit', 0, '[]', '{}', verb, subresource, user_agent, code, latency_ms, request_key FROM writes WHERE id = ?`,
        [await this.connection.nextWriteId(), request.tsMs, cls, request.usr, own.id],
      );
      await sql.run("UPDATE writes SET verb = NULL, subresource = NULL, user_agent = NULL, code = NULL, latency_ms = NULL, request_key = NULL WHERE id = ?", [
        own.id,
      ]);
      // A watched version no request has joined again: what the transaction learnt of those is out of date.
      const known = this.transactionKnows();
      if (known) known.watched = undefined;
      return { cls: null, tsMs: [request.tsMs, own.tsMs] };
    }
    if (!last) return { cls: null, tsMs: [] };
    const watched = await sql.get<{ id: number; tsMs: number; cls: StoredWrite["cls"] }>(
      `SELECT id, ts_ms AS "tsMs", class AS cls FROM writes WHERE object_id = ? AND source = 'watch' AND prev_rv = ? AND request_key IS NULL AND class <> 'delete' AND ts_ms BETWEEN ? AND ?
       ORDER BY abs(ts_ms - ?) LIMIT 1`,
      [own.objectId, precondition, own.tsMs - SAME_WRITE_MS, own.tsMs + SAME_WRITE_MS, own.tsMs],
    );
    if (!watched) return { cls: null, tsMs: [] };
    await sql.run(
      `UPDATE writes SET (verb, subresource, user_agent, code, latency_ms, request_key) = (SELECT verb, subresource, user_agent, code, latency_ms, request_key FROM writes WHERE id = ?),
         writer = CASE WHEN writer = 'unknown' THEN (SELECT writer FROM writes WHERE id = ?) ELSE writer END
       WHERE id = ?`,
      [own.id, own.id, watched.id],
    );
    await sql.run("DELETE FROM field_changes WHERE ts_ms = ? AND object_id = ? AND write_id = ?", [own.tsMs, own.objectId, own.id]);
    await sql.run("DELETE FROM writes WHERE id = ?", [own.id]);
    return { cls: watched.cls, tsMs: [own.tsMs, watched.tsMs] };
  }
}
