/**
 * A panel's data as CSV, one row per point: the timestamp (epoch ms and UTC), the value, and one
 * column per label. Values are written as JSON numbers, so nothing is rounded; a gap is empty.
 */
import type { PanelData } from "../panels/run-panel";

function cell(value: string): string {
  return /[",\n\r]/.test(value) ? `"${value.replace(/"/g, '""')}"` : value;
}

export function panelCsv(data: PanelData): string {
  const labels = [...new Set(data.series.flatMap((s) => Object.keys(s.labels)))].sort();
  const lines = [["timestamp_ms", "time_utc", "value", ...labels].map(cell).join(",")];
  for (const s of data.series) {
    for (const [t, v] of s.points) {
      lines.push([String(t), new Date(t).toISOString(), v === null ? "" : String(v), ...labels.map((l) => s.labels[l] ?? "")].map(cell).join(","));
    }
  }
  return `${lines.join("\n")}\n`;
}

/** A table as CSV: a header row, then one row per entry; numbers as JSON writes them (nothing rounded), null empty. */
export function tableCsv(header: readonly string[], rows: readonly (readonly (string | number | null)[])[]): string {
  const line = (values: readonly (string | number | null)[]) => values.map((v) => cell(v === null ? "" : String(v))).join(",");
  return `${[line(header), ...rows.map(line)].join("\n")}\n`;
}
