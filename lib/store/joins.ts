/**
 * One write, one row: a write that both the watch recorder and an audit log saw is stored once, whichever
 * arrives first. They are the same write when they name the same object and the version it made (its
 * resourceVersion; a delete's watch event carries `deleted@<version>`), or, for a delete, which an audit
 * log answers with a Status that has no version, when both say the object was deleted within a minute.
 * The row keeps the recorder's class and diff (it saw every version in order) and the audit log's request
 * (verb, subresource, user agent, code, latency, the request's key), whichever came first; its writer is
 * the field manager, or the audit's user where managedFields named none.
 */
import type { StoreConnection } from "./types";
import type { StoredWrite } from "../wire/objects";

/** How far apart the recorder and an audit log may place the same write: the watch event's arrival against the request's time. */
export const SAME_WRITE_MS = 60_000;

/** What a write's class says of its audit request: changed nothing, changed something, or not known. */
export const noopFlag = (cls: StoredWrite["cls"] | undefined): boolean | null =>
  cls === "no-op" ? true : cls === "routed" || cls === "unrouted" ? false : null;

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
const madeVersion = (rv: string | undefined): string | undefined => (rv?.startsWith("deleted@") ? rv.slice("deleted@".length) : rv);

export class WriteJoins {
  constructor(private readonly connection: StoreConnection) {}

  private statement(sql: string) {
    return this.connection.statement(sql);
  }

  /** An audited write that the recorder already stored: the audit's request joins the recorder's row. */
  intoWatched(objectId: number, write: StoredWrite, requestKey: string | undefined): JoinedRow | undefined {
    const version = madeVersion(write.resourceVersion) ?? null;
    const isDelete = write.cls === "delete" ? 1 : 0;
    if (version === null && !isDelete) return undefined;
    const row = this.statement(
      `SELECT id FROM writes WHERE object_id = ? AND ts_ms BETWEEN ? AND ? AND source = 'watch' AND verb IS NULL
         AND (rv = ? OR rv = 'deleted@' || ? OR (? = 1 AND class = 'delete'))
       ORDER BY (rv = ? OR rv = 'deleted@' || ?) DESC, abs(ts_ms - ?) LIMIT 1`,
    ).get(objectId, write.tsMs - SAME_WRITE_MS, write.tsMs + SAME_WRITE_MS, version, version, isDelete, version, version, write.tsMs) as
      { id: number } | undefined;
    if (!row) return undefined;
    const r = write.request;
    return this.statement(
      `UPDATE writes SET verb = ?, subresource = ?, user_agent = ?, code = ?, latency_ms = ?, request_key = ?, writer = CASE WHEN writer = 'unknown' THEN ? ELSE writer END
       WHERE id = ? RETURNING id, ts_ms AS tsMs, writer, request_key AS requestKey, class AS cls`,
    ).get(
      r?.verb ?? null,
      r?.subresource ?? null,
      r?.userAgent ?? null,
      r?.code ?? null,
      r?.latencyMs ?? null,
      requestKey ?? null,
      write.writer,
      row.id,
    ) as JoinedRow;
  }

  /** A watched version that an audit log already stored: the recorder's class and diff join the audit's row. */
  intoAudited(objectId: number, write: StoredWrite): JoinedRow | undefined {
    const version = madeVersion(write.resourceVersion) ?? null;
    const isDelete = write.cls === "delete" ? 1 : 0;
    // A delete by the nearest audited delete (or the write whose version it removed); any other version by the earliest
    // audited write that answered with it (it made it; later ones answered with it unchanged).
    const row = this.statement(
      `SELECT id FROM writes WHERE object_id = ? AND ts_ms BETWEEN ? AND ? AND source = 'audit'
         AND CASE WHEN ? = 1 THEN class = 'delete' OR rv = ? ELSE rv = ? AND class <> 'delete' END
       ORDER BY CASE WHEN ? = 1 THEN abs(ts_ms - ?) ELSE ts_ms END, id LIMIT 1`,
    ).get(objectId, write.tsMs - SAME_WRITE_MS, write.tsMs + SAME_WRITE_MS, isDelete, version, version, isDelete, write.tsMs) as { id: number } | undefined;
    if (!row) return undefined;
    return this.statement(
      `UPDATE writes SET class = ?, heartbeat = ?, changes = ?, projection = ?, body = ?, rv = ?, source = 'watch', writer = CASE WHEN ? = 'unknown' THEN writer ELSE ? END
       WHERE id = ? RETURNING id, ts_ms AS tsMs, writer, request_key AS requestKey, class AS cls`,
    ).get(
      write.cls,
      write.heartbeat ? 1 : 0,
      JSON.stringify(write.changes),
      JSON.stringify(write.projection),
      write.body === undefined ? null : JSON.stringify(write.body),
      write.resourceVersion ?? null,
      write.writer,
      write.writer,
      row.id,
    ) as JoinedRow;
  }
}
