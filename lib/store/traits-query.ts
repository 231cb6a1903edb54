/**
 * The condition-clock and echo report's counts (traits.ts): per object, writer, class and traits over (from, to], whole
 * days from the roll-ups and the rest from the writes' partial index, each group with its kind and its first write as
 * an example; and the report itself, its examples named.
 */
import { exampleObjects, summariseTraits, withExampleKeys, type TraitCount } from "../analysis/write-traits";
import type { TraitsAnswer } from "../wire/traits";
import type { StoreDatabase } from "./database";
import { DayRollups, HOUR_MS } from "./day-rollups";
import { objectScope, type ObjectFilter } from "./ranking";
import { TRAITED } from "./traits";

/** Groups read at most: past it the answer says the range was cut (20,000 objects with a few writers and kinds of traits each fit). */
export const MAX_TRAIT_GROUPS = 500_000;

export class TraitQueries {
  constructor(
    private readonly database: StoreDatabase,
    private readonly rollups: DayRollups,
  ) {}

  private sql() {
    return this.database.sql();
  }

  /** The report over the scope and range; `cut` when there were more groups than are read. */
  async answer(filter: ObjectFilter): Promise<{ answer: TraitsAnswer; cut: boolean }> {
    const { counts, cut } = await this.counts(filter);
    const summary = summariseTraits(counts, { startMs: filter.fromMs, endMs: filter.toMs });
    return { answer: withExampleKeys(summary, await this.database.keysOf(exampleObjects(summary))), cut };
  }

  /** Each object's traited writes in the scope, by writer, class and traits. */
  async counts(filter: ObjectFilter): Promise<{ counts: TraitCount[]; cut: boolean }> {
    const plan = await this.rollups.plan(filter.fromMs, filter.toMs);
    const { clauses: scope, params: scopeParams } = objectScope(filter, "o.");
    const inScope = scope.length > 0 ? ` AND ${scope.join(" AND ")}` : "";
    const columns = `t.object_id AS "objectId", o.grp AS "group", o.kind, t.writer, t.class AS cls`;
    const fromWrites = `SELECT ${columns}, COALESCE(t.traits, '') AS traits, COUNT(*) AS writes, MIN(t.id) AS example
      FROM writes t ${this.database.engine.indexedBy("writes_traits")} JOIN objects o ON o.id = t.object_id
      WHERE t.ts_ms > ? AND t.ts_ms <= ? AND ${TRAITED.replaceAll("traits", "t.traits").replace("class", "t.class")}${inScope}
      GROUP BY t.object_id, o.grp, o.kind, t.writer, t.class, COALESCE(t.traits, '') LIMIT ${MAX_TRAIT_GROUPS + 1}`;
    const fromDays = `SELECT ${columns}, t.traits, SUM(t.n) AS writes, MIN(t.example) AS example
      FROM rank_days_traits t JOIN objects o ON o.id = t.object_id WHERE t.day BETWEEN ? AND ?${inScope}
      GROUP BY t.object_id, o.grp, o.kind, t.writer, t.class, t.traits LIMIT ${MAX_TRAIT_GROUPS + 1}`;
    const hourMs = ([first, last]: [number, number]) => [first * HOUR_MS, (last + 1) * HOUR_MS];
    const parts: { sql: string; params: number[]; sign: 1 | -1 }[] = [
      ...plan.raw.map((range) => ({ sql: fromWrites, params: range, sign: 1 as const })),
      ...plan.hours.map((run) => ({ sql: fromWrites, params: hourMs(run), sign: 1 as const })),
      ...plan.minusHours.map((run) => ({ sql: fromWrites, params: hourMs(run), sign: -1 as const })),
      ...plan.rolled.map((run) => ({ sql: fromDays, params: run, sign: 1 as const })),
    ];
    const groups = new Map<string, TraitCount>();
    let cut = false;
    for (const part of parts) {
      const rows = await this.sql().all<TraitCount>(part.sql, [...part.params, ...scopeParams]);
      if (rows.length > MAX_TRAIT_GROUPS) cut = true;
      for (const row of rows.slice(0, MAX_TRAIT_GROUPS)) {
        const id = `${row.objectId}\u0000${row.writer}\u0000${row.cls}\u0000${row.traits}`;
        const group = groups.get(id);
        // A subtracted part's example may be outside the range: only an added part's is kept.
        const example = part.sign === 1 ? Number(row.example) : Infinity;
        if (!group) groups.set(id, { ...row, objectId: Number(row.objectId), writes: part.sign * Number(row.writes), example });
        else {
          group.writes += part.sign * Number(row.writes);
          group.example = Math.min(group.example, example);
        }
      }
    }
    const counts = [...groups.values()].filter((g) => g.writes > 0);
    return { counts: counts.slice(0, MAX_TRAIT_GROUPS), cut: cut || counts.length > MAX_TRAIT_GROUPS };
  }
}
