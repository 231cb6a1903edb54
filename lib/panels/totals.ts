/** The totals table's rows: current and previous range joined per (API server, resource, verb, subresource). */
import type { Series } from "../promql/types";
import { joinResource } from "./resource-name";

export interface TotalsRow {
  key: string;
  job?: string;
  resource: string;
  verb: string;
  subresource: string;
  current: number;
  previous: number | undefined;
}

function keyOf(labels: Record<string, string>): string {
  return [labels.job ?? "", labels.group ?? "", labels.resource ?? "", labels.verb ?? "", labels.subresource ?? ""].join("\u0000");
}

function lastValue(series: Series): number {
  const point = series.points[series.points.length - 1];
  return point && point[1] !== null ? point[1] : 0;
}

export function joinTotals(current: Series[], previous: Series[] | undefined): TotalsRow[] {
  const before = new Map<string, number>();
  for (const s of previous ?? []) before.set(keyOf(s.labels), lastValue(s));
  return current.map((s) => {
    const key = keyOf(s.labels);
    return {
      key,
      job: s.labels.job,
      resource: joinResource(s.labels.resource ?? "", s.labels.group),
      verb: s.labels.verb ?? "",
      subresource: s.labels.subresource ?? "",
      current: lastValue(s),
      previous: previous === undefined ? undefined : (before.get(key) ?? 0),
    };
  });
}

export type TotalsSortKey = "job" | "resource" | "verb" | "subresource" | "current" | "previous" | "change";

export function sortTotals(rows: TotalsRow[], key: TotalsSortKey, descending: boolean): TotalsRow[] {
  const value = (row: TotalsRow): number | string => {
    switch (key) {
      case "current":
        return row.current;
      case "previous":
        return row.previous ?? -1;
      case "change":
        return row.previous ? row.current / row.previous : row.current > 0 ? Number.MAX_VALUE : 0;
      default:
        return row[key] ?? "";
    }
  };
  const sign = descending ? -1 : 1;
  return [...rows].sort((a, b) => {
    const x = value(a);
    const y = value(b);
    const order = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y));
    return order * sign || a.key.localeCompare(b.key);
  });
}
