/**
 * Per-object counts over aligned spans of hours (2, 4 and 8 hours, a day, and 2, 4 and 8 days), each built from the two
 * or three spans below it as soon as they are all rolled up, so a ranking over a fortnight sums a handful of spans
 * instead of fourteen days, and a range's edge hours a few spans instead of each hour. A span covers hours
 * [first, first + hours); a day's (24 hours) starts at its first hour. A write stored late into a rolled-up day drops
 * every span that holds any of its hours (`drop`), and they are built again as the day is rolled up again.
 */
import type { StoreDatabase } from "./database";
import { COUNT_COLUMNS } from "./counts";

/** Each size is built from the one before it (hours from rank_hours), so each is a whole number of the one before. */
export const SPAN_HOURS = [1, 2, 4, 8, 24, 48, 96, 192] as const;
const DAY_HOURS = 24;

/** One read of the counts: rolled-up hours [first, last] (a span of `hours`, or a run of single hours when 1), added or subtracted. */
export interface CountRead {
  hours: number;
  first: number;
  last: number;
  sign: 1 | -1;
}

/**
 * The fewest reads of whole spans that cover hours [first, last], all rolled up: from the left, the largest span that
 * starts there, ends inside and is built (`built`); single hours left between them go as runs.
 */
export function spanReads(first: number, last: number, sign: 1 | -1, built: (hours: number, first: number) => boolean): CountRead[] {
  const reads: CountRead[] = [];
  for (let hour = first; hour <= last;) {
    const size = SPAN_HOURS.findLast((s) => s > 1 && hour % s === 0 && hour + s - 1 <= last && built(s, hour)) ?? 1;
    const previous = reads.at(-1);
    if (size === 1 && previous?.hours === 1 && previous.last + 1 === hour) previous.last = hour;
    else reads.push({ hours: size, first: hour, last: hour + size - 1, sign });
    hour += size;
  }
  return reads;
}

export const SPANS_SCHEMA = (counts: string) => `
-- Keyed by size and start first: one span is a run of rows, one per object with writes in it.
CREATE TABLE IF NOT EXISTS rank_spans (hours INTEGER NOT NULL, first_hour INTEGER NOT NULL, object_id INTEGER NOT NULL, ${counts}, PRIMARY KEY (hours, first_hour, object_id)) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS rank_spans_done (hours INTEGER NOT NULL, first_hour INTEGER NOT NULL, PRIMARY KEY (hours, first_hour)) WITHOUT ROWID;
`;
export const SPAN_TABLES = ["rank_spans", "rank_spans_done"];

export class RankSpans {
  constructor(private readonly database: StoreDatabase) {}

  private sql() {
    return this.database.sql();
  }

  /** Builds the span of `hours` starting at `first` from the spans (or hours) below it, all rolled up by the caller's word. */
  private async build(hours: number, first: number): Promise<void> {
    const below = SPAN_HOURS[SPAN_HOURS.indexOf(hours as (typeof SPAN_HOURS)[number]) - 1];
    const sums = COUNT_COLUMNS.map((c) => `SUM(${c})`).join(", ");
    const from =
      below === 1
        ? ["FROM rank_hours WHERE hour BETWEEN ? AND ?", [first, first + hours - 1]]
        : ["FROM rank_spans WHERE hours = ? AND first_hour BETWEEN ? AND ?", [below, first, first + hours - 1]];
    await this.sql().run(
      `INSERT INTO rank_spans (hours, first_hour, object_id, ${COUNT_COLUMNS.join(", ")}) SELECT CAST(? AS BIGINT), CAST(? AS BIGINT), object_id, ${sums} ${from[0]} GROUP BY object_id`,
      [hours, first, ...(from[1] as number[])],
    );
    await this.sql().run("INSERT INTO rank_spans_done (hours, first_hour) VALUES (?, ?)", [hours, first]);
  }

  /** Hour `hour` is rolled up, and so are those before it in its day: builds the spans within the day that end with it. */
  async hourDone(hour: number): Promise<void> {
    for (const hours of SPAN_HOURS) if (hours > 1 && hours < DAY_HOURS && (hour + 1) % hours === 0) await this.build(hours, hour + 1 - hours);
  }

  /** Day `day` is rolled up: builds its span, then each span of days holding it whose other days are rolled up too. */
  async dayDone(day: number): Promise<void> {
    await this.build(DAY_HOURS, day * DAY_HOURS);
    for (const hours of SPAN_HOURS.filter((s) => s > DAY_HOURS)) {
      const first = Math.floor((day * DAY_HOURS) / hours) * hours;
      const half = hours / 2;
      const halves = await this.sql().get<{ n: number }>("SELECT COUNT(*) AS n FROM rank_spans_done WHERE hours = ? AND first_hour IN (?, ?)", [
        half,
        first,
        first + half,
      ]);
      if (halves!.n < 2) return;
      await this.build(hours, first);
    }
  }

  /** Drops every span that holds any of hours [first, last]: they are built again once those hours are rolled up again. */
  async drop(first: number, last: number): Promise<void> {
    // A statement per size and table, each a range of the key.
    for (const hours of SPAN_HOURS.filter((s) => s > 1))
      for (const table of SPAN_TABLES)
        await this.sql().run(`DELETE FROM ${table} WHERE hours = ? AND first_hour BETWEEN ? AND ?`, [hours, first - hours + 1, last]);
  }

  /** The spans built that start in [first, last], as a test of whether one is. */
  async builtIn(first: number, last: number): Promise<(hours: number, first: number) => boolean> {
    const rows = await this.sql().all<{ hours: number; first_hour: number }>("SELECT hours, first_hour FROM rank_spans_done WHERE first_hour BETWEEN ? AND ?", [
      first,
      last,
    ]);
    const built = new Set(rows.map((r) => `${r.hours}/${r.first_hour}`));
    return (hours, start) => built.has(`${hours}/${start}`);
  }
}
