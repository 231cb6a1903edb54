/**
 * The condition-clock and echo report's counts (traits.ts): per object, writer, class and traits over (from, to], whole
 * days from the roll-ups and the rest from the writes' partial index, with each group's first write as an example.
 */
import type { WriteClass } from "../churn/analyze";
import type { TraitCount } from "../analysis/write-traits";
import type { StoreDatabase } from "./database";
import { DayRollups, HOUR_MS } from "./day-rollups";
import type { ObjectFilter } from "./ranking";
import { TRAITED } from "./traits";

/** Groups read at most: past it the answer says the range was cut (20,000 objects with a few writers and kinds of traits each fit). */
export const MAX_TRAIT_GROUPS = 200_000;

interface Group {
  objectId: number;
  writer: string;
  cls: WriteClass;
  traits: string;
  n: number;
  example: number;
}

export class TraitQueries {
  constructor(
    private readonly database: StoreDatabase,
    private readonly rollups: DayRollups,
  ) {}

  private sql() {
    return this.database.sql();
  }

  /** Each object's traited writes in the scope, by writer, class and traits; `cut` when there were more groups than are read. */
  async counts(filter: ObjectFilter): Promise<{ counts: TraitCount[]; cut: boolean }> {
    const plan = await this.rollups.plan(filter.fromMs, filter.toMs);
    const scope: string[] = [];
    const scopeParams: string[] = [];
    for (const [column, value] of [
      ["cluster", filter.cluster],
      ["grp", filter.group],
      ["kind", filter.kind],
      ["namespace", filter.namespace],
    ] as const)
      if (value !== undefined) {
        scope.push(`${column} = ?`);
        scopeParams.push(value);
      }
    const inScope = scope.length > 0 ? ` AND object_id IN (SELECT id FROM objects WHERE ${scope.join(" AND ")})` : "";
    const fromWrites = `SELECT object_id AS "objectId", writer, class AS cls, COALESCE(traits, '') AS traits, COUNT(*) AS n, MIN(id) AS example
      FROM writes ${this.database.indexedBy("writes_traits")} WHERE ts_ms > ? AND ts_ms <= ? AND ${TRAITED}${inScope} GROUP BY object_id, writer, class, COALESCE(traits, '') LIMIT ${MAX_TRAIT_GROUPS + 1}`;
    const fromDays = `SELECT object_id AS "objectId", writer, class AS cls, traits, SUM(n) AS n, MIN(example) AS example
      FROM rank_days_traits WHERE day BETWEEN ? AND ?${inScope} GROUP BY object_id, writer, class, traits LIMIT ${MAX_TRAIT_GROUPS + 1}`;
    const hourMs = ([first, last]: [number, number]) => [first * HOUR_MS, (last + 1) * HOUR_MS];
    const parts: { sql: string; params: number[]; sign: 1 | -1 }[] = [
      ...plan.raw.map((range) => ({ sql: fromWrites, params: range, sign: 1 as const })),
      ...plan.hours.map((run) => ({ sql: fromWrites, params: hourMs(run), sign: 1 as const })),
      ...plan.minusHours.map((run) => ({ sql: fromWrites, params: hourMs(run), sign: -1 as const })),
      ...plan.rolled.map((run) => ({ sql: fromDays, params: run, sign: 1 as const })),
    ];
    const groups = new Map<string, Group>();
    let cut = false;
    for (const part of parts) {
      const rows = await this.sql().all<Group>(part.sql, [...part.params, ...scopeParams]);
      if (rows.length > MAX_TRAIT_GROUPS) cut = true;
      for (const row of rows.slice(0, MAX_TRAIT_GROUPS)) {
        const id = `${row.objectId}\u0000${row.writer}\u0000${row.cls}\u0000${row.traits}`;
        const group = groups.get(id);
        if (!group) groups.set(id, { ...row, n: part.sign * Number(row.n), example: part.sign === 1 ? Number(row.example) : Infinity });
        else {
          group.n += part.sign * Number(row.n);
          if (part.sign === 1) group.example = Math.min(group.example, Number(row.example));
        }
      }
    }
    const kept = [...groups.values()].filter((g) => g.n > 0);
    if (kept.length > MAX_TRAIT_GROUPS) cut = true;
    const shown = kept.slice(0, MAX_TRAIT_GROUPS);
    const keys = await this.database.keysOf([...new Set(shown.map((g) => g.objectId))]);
    const examples = await this.examplesOf(shown.map((g) => g.example).filter(Number.isFinite));
    const counts = shown.flatMap((g): TraitCount[] => {
      const key = keys.get(g.objectId);
      if (!key) return [];
      const at = examples.get(g.example);
      return [{ key, writer: g.writer, cls: g.cls, traits: g.traits, writes: g.n, example: at === undefined ? null : { key, tsMs: at, seq: g.example } }];
    });
    return { counts, cut };
  }

  /** Each example write's time (an example pruned since is none). */
  private async examplesOf(ids: number[]): Promise<Map<number, number>> {
    const out = new Map<number, number>();
    const unique = [...new Set(ids)];
    for (let i = 0; i < unique.length; i += 500) {
      const chunk = unique.slice(i, i + 500);
      const rows = await this.sql().all<{ id: number; tsMs: number }>(
        `SELECT id, ts_ms AS "tsMs" FROM writes WHERE id IN (${chunk.map(() => "?").join(",")})`,
        chunk,
      );
      for (const row of rows) out.set(Number(row.id), Number(row.tsMs));
    }
    return out;
  }
}
