/**
 * Every object's routed changes in a range, as the flap analysis and the damping what-if read them (analysis/flaps.ts):
 * from the index of the writes that can move a projection (moves.ts) alone, object by object in time order, and, for an
 * object whose first two changes are close enough to be a flap, the projection before the first.
 */
import type { ChangeRun } from "../analysis/flaps";
import type { StoreDatabase } from "./database";
import { MOVES } from "./moves";
import { objectScope, type ObjectFilter } from "./ranking";

/** Routed changes read at most for one answer: past it the answer says the range was cut (a narrower range or scope reads all). */
export const MAX_FLAP_CHANGES = 2_000_000;

export class FlapQueries {
  constructor(private readonly database: StoreDatabase) {}

  private sql() {
    return this.database.sql();
  }

  /** Each object's routed changes in (from, to], oldest first; `windowMs` says whose projection before the range is needed. */
  async runs(filter: ObjectFilter, windowMs: number): Promise<{ runs: ChangeRun[]; cut: boolean }> {
    const { clauses: scope, params: scopeParams } = objectScope(filter);
    const inScope = scope.length > 0 ? ` AND object_id IN (SELECT id FROM objects WHERE ${scope.join(" AND ")})` : "";
    const rows = await this.sql().all<{ id: number; tsMs: number; projection: string }>(
      `SELECT object_id AS id, ts_ms AS "tsMs", projection FROM writes ${this.database.engine.indexedBy("writes_moves")}
         WHERE ${MOVES} AND class = 'routed' AND ts_ms > ? AND ts_ms <= ?${inScope} ORDER BY object_id, ts_ms, id LIMIT ${MAX_FLAP_CHANGES + 1}`,
      [filter.fromMs, filter.toMs, ...scopeParams],
    );
    const cut = rows.length > MAX_FLAP_CHANGES;
    const byObject = new Map<number, { tsMs: number; projection: string }[]>();
    for (const row of cut ? rows.slice(0, MAX_FLAP_CHANGES) : rows) {
      const id = Number(row.id);
      (byObject.get(id) ?? byObject.set(id, []).get(id)!).push({ tsMs: Number(row.tsMs), projection: row.projection });
    }
    const keys = await this.database.keysOf([...byObject.keys()]);
    const runs: ChangeRun[] = [];
    for (const [id, changes] of byObject) {
      const key = keys.get(id);
      if (!key) continue;
      // Only the second change can undo the first against what came before the range.
      const needed = changes.length >= 2 && changes[1].tsMs - changes[0].tsMs <= windowMs;
      runs.push({ key, initial: needed ? await this.projectionBefore(id, changes[0].tsMs) : undefined, changes });
    }
    return { runs, cut };
  }

  /** The projection an object had just before `tsMs`: its last write's before then, or as first seen. */
  private async projectionBefore(id: number, tsMs: number): Promise<string | undefined> {
    const hit =
      (await this.sql().get<{ projection: string }>("SELECT projection FROM writes WHERE object_id = ? AND ts_ms < ? ORDER BY ts_ms DESC, id DESC LIMIT 1", [
        id,
        tsMs,
      ])) ?? (await this.sql().get<{ projection: string }>("SELECT projection FROM first_seen WHERE object_id = ? AND ts_ms < ?", [id, tsMs]));
    return hit?.projection;
  }
}
