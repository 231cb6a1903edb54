"use client";
/**
 * Clients' write requests per client: ranked by any column (the change before/after a time included, largest rise
 * first, so a storm's writer leads), with its versions, and a CSV of exactly what is shown.
 */
import { CsvLink } from "@/components/panels/csv-link";
import { UtcTimeInput } from "@/components/time-range/utc-time-input";
import { formatNumber } from "@/lib/format/number";
import { formatUtc } from "@/lib/format/time";
import { formatDurationMs } from "@/lib/time/duration";
import type { ClientRow, ClientsAnswer } from "@/lib/wire/clients";
import { ClientVersions } from "./client-versions";
import { NoopEvidence } from "./noop-evidence";

type Comparison = NonNullable<ClientsAnswer["comparison"]>["rows"][number];

const COLUMNS = [
  { id: "writes", label: "writes", title: "write requests in the range", value: (c: ClientRow) => c.writes },
  { id: "failed", label: "failed", title: "write requests the API server refused or failed", value: (c: ClientRow) => c.failed },
  { id: "noop", label: "no-op", title: "successful writes that changed nothing (what each count rests on: below the table)", value: (c: ClientRow) => c.noop },
  { id: "changed", label: "changed", title: "successful writes that changed their object", value: (c: ClientRow) => c.changed },
] as const;

const COMPARED = [
  { id: "before", label: "before", title: "write requests in the window before the time", value: (r: Comparison | undefined) => r?.before ?? 0 },
  { id: "after", label: "after", title: "write requests in the window after the time", value: (r: Comparison | undefined) => r?.after ?? 0 },
  {
    id: "change",
    label: "change",
    title: "after against before; a client with no writes before is new (ranked first)",
    // No writes either side ranks last: nothing changed that anyone could see.
    value: (r: Comparison | undefined) =>
      r === undefined || (r.changePct === null && r.after === 0) ? Number.NEGATIVE_INFINITY : r.changePct === null ? Number.POSITIVE_INFINITY : r.changePct,
  },
] as const;

export type WritesSort = (typeof COLUMNS)[number]["id"] | (typeof COMPARED)[number]["id"];

const cell = "px-2 py-1";
const num = `${cell} text-right font-mono`;

/** "+92,550 %", "−74 %", "new": the change as the table shows it and the CSV writes it. */
function changeText(r: Comparison | undefined): string {
  if (r === undefined || r.changePct === null) return r && r.after > 0 ? "new" : "–";
  const sign = r.changePct > 0 ? "+" : r.changePct < 0 ? "−" : "";
  return `${sign}${formatNumber(Math.round(Math.abs(r.changePct)), true)} %`;
}

export function WritesTable({
  answer,
  atMs,
  offeredAtMs,
  middleMs,
  onCompareAt,
  sort,
  onSort,
  stale = false,
}: {
  answer: ClientsAnswer;
  /** a new answer (another time, range or scope) is on its way: this one is shown faded until it comes */
  stale?: boolean;
  atMs: number | undefined;
  /** the onset, offered as the split */
  offeredAtMs: number | undefined;
  middleMs: number;
  onCompareAt: (atMs: number | null) => void;
  sort: WritesSort;
  onSort: (sort: WritesSort) => void;
}) {
  const comparison = answer.comparison;
  const compared = new Map(comparison?.rows.map((r) => [r.client, r]));
  const valueOf = (c: ClientRow): number => {
    const column = COLUMNS.find((k) => k.id === sort);
    if (column) return column.value(c);
    return COMPARED.find((k) => k.id === sort)!.value(compared.get(c.client));
  };
  const shownSort = comparison || COLUMNS.some((k) => k.id === sort) ? sort : "writes";
  const rows = [...answer.clients].sort((a, b) =>
    shownSort === sort ? valueOf(b) - valueOf(a) || b.writes - a.writes || a.client.localeCompare(b.client) : b.writes - a.writes,
  );
  const columns = [...COLUMNS, ...(comparison ? COMPARED : [])];
  const heading = ({ id, label, title }: { id: WritesSort; label: string; title: string }) => (
    <th key={id} className={`${cell} text-right font-medium`} title={title} aria-sort={shownSort === id ? "descending" : "none"}>
      <button type="button" onClick={() => onSort(id)} className={shownSort === id ? "font-semibold text-[var(--fg)]" : "hover:underline"}>
        {label}
        {shownSort === id ? " ▾" : ""}
      </button>
    </th>
  );
  const csvRows = () =>
    rows.map((c) => {
      const r = compared.get(c.client);
      return [
        c.client,
        c.user,
        c.agent,
        c.writes,
        c.failed,
        c.noop,
        c.changed,
        ...(comparison ? [r?.before ?? 0, r?.after ?? 0, r?.changePct === undefined ? null : r.changePct === null ? "new" : r.changePct] : []),
      ];
    });

  return (
    <section
      data-testid="clients-table"
      data-updating={stale ? "" : undefined}
      className={`rounded-md border border-[var(--border)] bg-[var(--panel)] p-3 ${stale ? "opacity-60" : ""}`}
    >
      <div className="mb-2 flex flex-wrap items-center gap-3">
        <h2 className="text-sm font-semibold">Clients</h2>
        <label className="flex items-center gap-1 text-xs">
          before/after at
          <UtcTimeInput label="before/after time (UTC)" valueMs={atMs} onChange={onCompareAt} />
        </label>
        {atMs === undefined && offeredAtMs !== undefined && (
          <button type="button" onClick={() => onCompareAt(offeredAtMs)} className="rounded border border-[var(--border)] px-2 py-0.5 text-xs">
            Compare before/after {formatUtc(offeredAtMs, false)}
          </button>
        )}
        {atMs === undefined ? (
          <button type="button" onClick={() => onCompareAt(middleMs)} className="rounded border border-[var(--border)] px-2 py-0.5 text-xs">
            Compare before/after the middle
          </button>
        ) : (
          <button type="button" onClick={() => onCompareAt(null)} className="rounded border border-[var(--border)] px-2 py-0.5 text-xs">
            Clear
          </button>
        )}
        {comparison && (
          <span className="text-xs text-[var(--muted)]">
            {formatDurationMs(comparison.windowMs)} before vs {formatDurationMs(comparison.windowMs)} after {formatUtc(comparison.atMs, false)}
          </span>
        )}
        {stale && (
          <span role="status" className="text-xs text-[var(--muted)]">
            updating…
          </span>
        )}
        <CsvLink
          name="client-writes"
          testId="clients-csv"
          header={["client", "user", "agent", ...COLUMNS.map((c) => c.label), ...(comparison ? ["before", "after", "change %"] : [])]}
          rows={csvRows}
        />
      </div>
      {/* On a phone the table scrolls sideways rather than breaking a client's name letter by letter. */}
      <div className="overflow-x-auto">
        <table className="w-full min-w-[40rem] text-sm tabular">
          <thead className="text-xs text-[var(--muted)]">
            <tr>
              <th className={`${cell} text-left font-medium`}>client (user · agent)</th>
              {columns.map(heading)}
            </tr>
          </thead>
          <tbody>
            {rows.map((c) => {
              const r = compared.get(c.client);
              return (
                <tr key={c.client} data-client={c.client} className="border-t border-[var(--border)]">
                  <td className={`${cell} font-mono text-xs`}>
                    <div className="break-all">{c.client}</div>
                    <div className="text-[11px] text-[var(--muted)]" data-cell="verbs">
                      {c.verbs.map((v) => `${v.verb} ${formatNumber(v.writes, true)}`).join(" · ")}
                      {c.neverStored > 0 && (
                        <span title="access and token reviews and TokenRequests: answered, never stored">{` · ${formatNumber(c.neverStored, true)} never stored`}</span>
                      )}
                    </div>
                    {c.versions.some((v) => v.version !== "") && <ClientVersions versions={c.versions} onCompare={onCompareAt} />}
                  </td>
                  {COLUMNS.map((k) => (
                    <td key={k.id} className={num} data-cell={k.id}>
                      {formatNumber(k.value(c), true)}
                    </td>
                  ))}
                  {comparison && (
                    <>
                      <td className={num} data-cell="before">
                        {formatNumber(r?.before ?? 0, true)}
                      </td>
                      <td className={num} data-cell="after">
                        {formatNumber(r?.after ?? 0, true)}
                      </td>
                      <td className={num} data-cell="change">
                        {changeText(r)}
                      </td>
                    </>
                  )}
                </tr>
              );
            })}
          </tbody>
        </table>
      </div>
      <NoopEvidence evidence={answer.evidence} unknown={answer.unknown} />
    </section>
  );
}
