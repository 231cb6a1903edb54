"use client";
import { useState } from "react";
import { formatChange, formatCount } from "@/lib/format/number";
import { joinTotals, sortTotals, type TotalsSortKey } from "@/lib/panels/totals";
import type { Series } from "@/lib/promql/types";

interface Props {
  current: Series[];
  previous: Series[] | undefined;
  showJob: boolean;
  selectedResource?: string;
  onSelectResource: (resource: string) => void;
}

export function TotalsTable({ current, previous, showJob, selectedResource, onSelectResource }: Props) {
  const [sort, setSort] = useState<{ key: TotalsSortKey; descending: boolean }>({ key: "current", descending: true });
  const rows = sortTotals(joinTotals(current, previous), sort.key, sort.descending);
  const sum = rows.reduce((a, r) => a + r.current, 0);
  // No series at all: Prometheus holds no data for the previous range, which is not the same as zero writes.
  const noPrevious = previous !== undefined && previous.length === 0;
  const sumPrevious = previous && !noPrevious ? rows.reduce((a, r) => a + (r.previous ?? 0), 0) : undefined;
  const previousCell = (value: number | undefined) => (noPrevious ? "no data" : value === undefined ? "…" : formatCount(value));

  const columns: { key: TotalsSortKey; label: string; numeric?: boolean }[] = [
    ...(showJob ? [{ key: "job" as const, label: "API server" }] : []),
    { key: "resource", label: "Resource" },
    { key: "verb", label: "Verb" },
    { key: "subresource", label: "Subresource" },
    { key: "current", label: "Writes", numeric: true },
    { key: "previous", label: "Previous range", numeric: true },
    { key: "change", label: "Change", numeric: true },
  ];

  return (
    <div className="max-h-[28rem] overflow-auto">
      <table className="w-full text-sm tabular" data-testid="totals-table">
        <thead className="sticky top-0 bg-[var(--panel)] text-xs text-[var(--muted)]">
          <tr>
            {columns.map((c) => (
              <th
                key={c.key}
                className={`px-2 py-1 font-medium ${c.numeric ? "text-right" : "text-left"}`}
                aria-sort={sort.key === c.key ? (sort.descending ? "descending" : "ascending") : "none"}
              >
                <button
                  type="button"
                  className="hover:text-[var(--fg)]"
                  onClick={() => setSort({ key: c.key, descending: sort.key === c.key ? !sort.descending : c.numeric === true })}
                >
                  {c.label}
                  {sort.key === c.key ? (sort.descending ? " ↓" : " ↑") : ""}
                </button>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          <tr className="border-b border-[var(--border)] font-semibold">
            <td className="px-2 py-1" colSpan={columns.length - 3}>
              All writes ({rows.length} series)
            </td>
            <td className="px-2 py-1 text-right" data-testid="totals-sum">
              {formatCount(sum)}
            </td>
            <td className="px-2 py-1 text-right">{previousCell(sumPrevious)}</td>
            <td className="px-2 py-1 text-right">{sumPrevious === undefined ? "" : formatChange(sum, sumPrevious)}</td>
          </tr>
          {rows.map((row) => (
            <tr
              key={row.key}
              data-row={`${row.job ? `${row.job} ` : ""}${row.resource} ${row.verb} ${row.subresource}`.trim()}
              className={`border-b border-[var(--border)] ${row.resource === selectedResource ? "bg-[var(--bg)]" : ""}`}
            >
              {showJob && <td className="px-2 py-0.5">{row.job}</td>}
              <td className="px-2 py-0.5">
                <button type="button" className="text-left text-[var(--accent)] hover:underline" onClick={() => onSelectResource(row.resource)}>
                  {row.resource}
                </button>
              </td>
              <td className="px-2 py-0.5">{row.verb}</td>
              <td className="px-2 py-0.5 text-[var(--muted)]">{row.subresource || "—"}</td>
              <td className="px-2 py-0.5 text-right font-mono" data-cell="current">
                {formatCount(row.current)}
              </td>
              <td className="px-2 py-0.5 text-right font-mono text-[var(--muted)]" data-cell="previous">
                {previousCell(row.previous)}
              </td>
              <td className="px-2 py-0.5 text-right font-mono">{row.previous === undefined || noPrevious ? "" : formatChange(row.current, row.previous)}</td>
            </tr>
          ))}
        </tbody>
      </table>
      <p className="mt-2 text-xs text-[var(--muted)]">
        Writes are Prometheus <code>increase()</code> over the range. Prometheus extrapolates to the range edges, so a value can be fractional and differ from
        the exact count by up to one scrape interval&apos;s worth of writes at each edge.
      </p>
    </div>
  );
}
