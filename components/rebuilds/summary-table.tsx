"use client";
/** Per-site rebuild figures for two ranges side by side: this range vs the previous one, or before vs after a time. */
import { formatChange, formatNumber } from "@/lib/format/number";
import type { PanelData } from "@/lib/panels/run-panel";

type Figures = Map<string, Record<string, number | null>>;

function figures(data: PanelData | undefined, siteOf: (labels: Record<string, string>) => string): Figures {
  const out: Figures = new Map();
  for (const s of data?.series ?? []) {
    const site = siteOf(s.labels);
    const row = out.get(site) ?? {};
    const value = s.points.at(-1)?.[1] ?? null;
    // Rebuild counts become rates per hour so ranges of different lengths compare.
    row[s.labels.series] = s.labels.series === "rebuilds" && value !== null && data ? value / ((data.endMs - data.startMs) / 3_600_000) : value;
    out.set(site, row);
  }
  return out;
}

const COLUMNS: { key: string; label: string; digits?: boolean }[] = [
  { key: "rebuilds", label: "rebuilds/h" },
  { key: "mean s", label: "mean s" },
  { key: "busy s/s", label: "busy s/s" },
];

interface Props {
  testId: string;
  left: { label: string; data?: PanelData };
  right: { label: string; data?: PanelData };
  siteOf: (labels: Record<string, string>) => string;
  selectedSite?: string;
}

export function RebuildSummaryTable({ testId, left, right, siteOf, selectedSite }: Props) {
  const a = figures(left.data, siteOf);
  const b = figures(right.data, siteOf);
  const slowKey = [...new Set([...(left.data?.series ?? []), ...(right.data?.series ?? [])].map((s) => s.labels.series))].find((k) => k?.startsWith("over "));
  const columns = slowKey ? [...COLUMNS, { key: slowKey, label: slowKey.replace(" %", "") + " (%)" }] : COLUMNS;
  const sites = [...new Set([...a.keys(), ...b.keys()])].filter((s) => !selectedSite || s === selectedSite).sort();
  const cell = (v: number | null | undefined) => (v === null || v === undefined || Number.isNaN(v) ? "—" : formatNumber(v));
  return (
    <div className="overflow-x-auto">
      <table className="w-full text-sm tabular" data-testid={testId}>
        <thead className="text-xs text-[var(--muted)]">
          <tr>
            <th className="px-2 py-1 text-left font-medium">site</th>
            {columns.map((c) => (
              <th key={c.key} colSpan={3} className="px-2 py-1 text-center font-medium">
                {c.label}
              </th>
            ))}
          </tr>
          <tr>
            <th />
            {columns.map((c) => (
              <FragmentHeads key={c.key} left={left.label} right={right.label} />
            ))}
          </tr>
        </thead>
        <tbody>
          {sites.map((site) => (
            <tr key={site} data-site={site} className="border-t border-[var(--border)]">
              <td className="px-2 py-0.5">{site}</td>
              {columns.map((c) => {
                const x = a.get(site)?.[c.key];
                const y = b.get(site)?.[c.key];
                return (
                  <FragmentCells
                    key={c.key}
                    name={c.key}
                    left={cell(x)}
                    right={cell(y)}
                    change={x != null && y != null && !Number.isNaN(x) && !Number.isNaN(y) ? formatChange(y, x) : ""}
                  />
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}

function FragmentHeads({ left, right }: { left: string; right: string }) {
  return (
    <>
      <th className="px-2 text-right text-[11px] font-normal">{left}</th>
      <th className="px-2 text-right text-[11px] font-normal">{right}</th>
      <th className="px-2 text-right text-[11px] font-normal">change</th>
    </>
  );
}

function FragmentCells({ name, left, right, change }: { name: string; left: string; right: string; change: string }) {
  return (
    <>
      <td className="px-2 text-right font-mono text-[var(--muted)]" data-cell={`${name}|left`}>
        {left}
      </td>
      <td className="px-2 text-right font-mono" data-cell={`${name}|right`}>
        {right}
      </td>
      <td className="px-2 text-right font-mono">{change}</td>
    </>
  );
}
