/**
 * Recorded changes (churn/changes.ts), kept with the write that made them, and each workload's baseline: what it ran
 * when first seen, so that "no change since" has a date even for a workload that never changed while recorded.
 * Retention prunes old changes but keeps each object's latest, which is what that sentence reads.
 */
import type { ChangeLine, RecordedChange } from "../churn/changes";
import { objectKeyText } from "../objects/key";
import type { ObjectKey } from "../wire/objects";
import type { StoreConnection } from "./types";

export const CHANGES_TABLE = `
CREATE TABLE IF NOT EXISTS changes (
  object_id BIGINT NOT NULL, ts_ms BIGINT NOT NULL, writer TEXT NOT NULL, summary TEXT NOT NULL, diff TEXT NOT NULL, subject TEXT NOT NULL,
  -- 1: not a change but what the object ran when first seen
  baseline INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS changes_ts ON changes (ts_ms);
CREATE INDEX IF NOT EXISTS changes_object ON changes (object_id, ts_ms);
`;

const INSERT_CHANGE = "INSERT INTO changes (object_id, ts_ms, writer, summary, diff, subject, baseline)";

export interface StoredChange extends RecordedChange {
  key: ObjectKey;
  tsMs: number;
  writer: string;
  baseline: boolean;
}

interface ChangeRow {
  cluster: string;
  grp: string;
  kind: string;
  namespace: string;
  name: string;
  tsMs: number;
  writer: string;
  summary: string;
  diff: string;
  subject: string;
  baseline: number;
}

const SELECT = `SELECT o.cluster, o.grp, o.kind, o.namespace, o.name, c.ts_ms AS "tsMs", c.writer, c.summary, c.diff, c.subject, c.baseline
  FROM changes c JOIN objects o ON o.id = c.object_id`;

const fromRow = (r: ChangeRow): StoredChange => ({
  key: { cluster: r.cluster, group: r.grp, kind: r.kind, namespace: r.namespace, name: r.name },
  tsMs: r.tsMs,
  writer: r.writer,
  summary: r.summary,
  diff: JSON.parse(r.diff) as ChangeLine[],
  subject: JSON.parse(r.subject) as RecordedChange["subject"],
  baseline: r.baseline === 1,
});

export class Changes {
  constructor(private readonly database: StoreConnection) {}

  private sql() {
    return this.database.sql();
  }

  /** A change with the write that made it, or (`baseline`) what an object ran when first seen. */
  async add(objectId: number, tsMs: number, writer: string, change: RecordedChange, baseline = false): Promise<void> {
    const row = [objectId, tsMs, writer, change.summary, JSON.stringify(change.diff), JSON.stringify(change.subject), baseline ? 1 : 0];
    await this.database.insertRow(INSERT_CHANGE, row);
  }

  /**
   * The change a stored write made, as a later look at it says (the version before it learnt late, or the recorder's
   * own comparison joining an audited write): its earlier change goes, and `change` (if any) takes its place.
   */
  async replace(objectId: number, tsMs: number, writer: string, change: RecordedChange | undefined): Promise<void> {
    await this.sql().run("DELETE FROM changes WHERE object_id = ? AND ts_ms = ? AND baseline = 0", [objectId, tsMs]);
    if (change) await this.add(objectId, tsMs, writer, change);
  }

  /** A stored write's change credited to the writer its row now names (an audit log named the one the recorder could not). */
  async reattribute(objectId: number, tsMs: number, writer: string): Promise<void> {
    await this.sql().run("UPDATE changes SET writer = ? WHERE object_id = ? AND ts_ms = ? AND baseline = 0", [writer, objectId, tsMs]);
  }

  /** What an object ran when first seen; an earlier first sighting (an older log read later) moves it back. */
  async baseline(objectId: number, tsMs: number, change: RecordedChange): Promise<void> {
    const held = await this.sql().get<{ tsMs: number }>('SELECT ts_ms AS "tsMs" FROM changes WHERE object_id = ? AND baseline = 1', [objectId]);
    if (held && held.tsMs <= tsMs) return;
    if (held) await this.sql().run("DELETE FROM changes WHERE object_id = ? AND baseline = 1", [objectId]);
    await this.add(objectId, tsMs, "", change, true);
  }

  /**
   * The changes in (from, to], oldest first, and how many there are: at most `limit`, the first ones, or with `nearMs`
   * the ones nearest that time (an onset's).
   */
  async between(fromMs: number, toMs: number, limit: number, nearMs?: number): Promise<{ changes: StoredChange[]; total: number }> {
    const total = (await this.sql().get<{ n: number }>("SELECT COUNT(*) AS n FROM changes WHERE ts_ms > ? AND ts_ms <= ? AND baseline = 0", [fromMs, toMs]))!.n;
    const order = nearMs === undefined ? "c.ts_ms, c.object_id" : "ABS(c.ts_ms - ?), c.ts_ms, c.object_id";
    const rows = await this.sql().all<ChangeRow>(`${SELECT} WHERE c.ts_ms > ? AND c.ts_ms <= ? AND c.baseline = 0 ORDER BY ${order} LIMIT ?`, [
      fromMs,
      toMs,
      ...(nearMs === undefined ? [] : [nearMs]),
      limit,
    ]);
    const changes = rows.map(fromRow);
    if (nearMs !== undefined) changes.sort((a, b) => a.tsMs - b.tsMs);
    return { changes, total: Number(total) };
  }

  /** Each object's latest change or baseline at or before `atMs`: what it ran then, and since when. */
  async latestAt(atMs: number, limit: number): Promise<StoredChange[]> {
    const rows = await this.sql().all<ChangeRow>(
      `${SELECT} WHERE c.ts_ms = (SELECT MAX(l.ts_ms) FROM changes l WHERE l.object_id = c.object_id AND l.ts_ms <= ?) ORDER BY c.object_id LIMIT ?`,
      [atMs, limit],
    );
    // Two rows of one object at one instant (a baseline and a change): the change.
    const byObject = new Map<string, StoredChange>();
    for (const change of rows.map(fromRow)) {
      const id = objectKeyText(change.key);
      if (!byObject.has(id) || byObject.get(id)!.baseline) byObject.set(id, change);
    }
    return [...byObject.values()];
  }

  /**
   * The `maxWriters` busiest writers of (from, to], each with a user agent its writes carried ("" for watched writes)
   * and its writes per `stepMs` step, at each step's end: what a change is tested against.
   */
  async writerRates(
    fromMs: number,
    toMs: number,
    stepMs: number,
    maxWriters: number,
  ): Promise<{ writer: string; userAgent: string; counts: Map<number, number> }[]> {
    if (![fromMs, toMs, stepMs].every(Number.isSafeInteger) || stepMs <= 0) throw new RangeError("writer rates take whole milliseconds");
    // One pass over the range's writes: each write in the step that ends at or after it, (fromMs + k·step, fromMs + (k+1)·step].
    const rows = await this.sql().all<{ writer: string; userAgent: string | null; k: number; n: number }>(
      `SELECT writer, MAX(user_agent) AS "userAgent", (ts_ms - ${fromMs + 1}) / ${stepMs} AS k, COUNT(*) AS n FROM writes WHERE ts_ms > ? AND ts_ms <= ? GROUP BY writer, k`,
      [fromMs, toMs],
    );
    const byWriter = new Map<string, { writer: string; userAgent: string; counts: Map<number, number>; total: number }>();
    for (const row of rows) {
      const w = byWriter.get(row.writer) ?? byWriter.set(row.writer, { writer: row.writer, userAgent: "", counts: new Map(), total: 0 }).get(row.writer)!;
      if (row.userAgent !== null && row.userAgent > w.userAgent) w.userAgent = row.userAgent;
      w.counts.set(Number(row.k), Number(row.n));
      w.total += Number(row.n);
    }
    return [...byWriter.values()]
      .sort((a, b) => b.total - a.total || (a.writer < b.writer ? -1 : a.writer > b.writer ? 1 : 0))
      .slice(0, maxWriters)
      .map(({ total: _total, ...w }) => w);
  }

  /** Changes before `beforeMs`, except each object's latest. */
  async pruned(beforeMs: number): Promise<number> {
    return (
      await this.sql().run("DELETE FROM changes WHERE ts_ms < ? AND ts_ms < (SELECT MAX(l.ts_ms) FROM changes l WHERE l.object_id = changes.object_id)", [
        beforeMs,
      ])
    ).changes;
  }
}
