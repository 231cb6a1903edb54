/** Legend names from series labels, and series → chart rows (one row per timestamp). */
import type { Series } from "../prometheus/types";
import { OTHER_LABEL } from "./top-n";
import { joinResource } from "./params";

export function seriesName(labels: Record<string, string>): string {
  if (labels[OTHER_LABEL] !== undefined) return `other (${labels[OTHER_LABEL]} more)`;
  const parts: string[] = [];
  if (labels.series) parts.push(labels.series);
  if (labels.job) parts.push(labels.job);
  if (labels.resource !== undefined) parts.push(joinResource(labels.resource, labels.group));
  else if (labels.kind !== undefined) parts.push(labels.group ? `${labels.kind}.${labels.group}` : labels.kind);
  if (labels.verb) parts.push(labels.subresource ? `${labels.verb} ${labels.subresource}` : labels.verb);
  if (labels.code) parts.push(`code ${labels.code}`);
  if (parts.length === 0) {
    const rest = Object.entries(labels).map(([k, v]) => `${k}=${v}`);
    return rest.length ? rest.join(", ") : "total";
  }
  return parts.join(" · ");
}

export type ChartRow = { tsMs: number } & Record<string, number | null>;

/** Rows keyed s0, s1, … in series order; a missing point is null so the chart shows a gap. */
export function toChartRows(series: Series[]): ChartRow[] {
  const rows = new Map<number, ChartRow>();
  series.forEach((s, i) => {
    for (const [tsMs, value] of s.points) {
      let row = rows.get(tsMs);
      if (!row) {
        row = { tsMs } as ChartRow;
        rows.set(tsMs, row);
      }
      row[`s${i}`] = value;
    }
  });
  const sorted = [...rows.values()].sort((a, b) => a.tsMs - b.tsMs);
  for (const row of sorted) series.forEach((_, i) => (row[`s${i}`] ??= null));
  return sorted;
}
