"use client";
/**
 * The API cost of each component, from every request the audit logs hold (reads and watches too, counted per
 * minute): calls by verb over time, a table ranked by any column with each agent's service accounts under it, and,
 * around a chosen time or between two windows, what changed, in one sentence per component.
 */
import { Fragment, useState } from "react";
import { TimeSeriesChart } from "@/components/panels/time-series-chart";
import { CsvLink } from "@/components/panels/csv-link";
import { formatPct } from "@/lib/analysis/api-cost";
import { formatCount, formatNumber } from "@/lib/format/number";
import { formatDurationMs } from "@/lib/time/duration";
import { formatUtc } from "@/lib/format/time";
import type { Marker } from "@/lib/markers/marker";
import type { ApiCostAnswer, Change, ComparedRow, CostRow } from "@/lib/wire/api-cost";

const cell = "px-2 py-1";
const num = `${cell} whitespace-nowrap text-right font-mono`;

/** The table's columns: each ranks the components when its heading is clicked. */
const COLUMNS = [
  { id: "calls", label: "calls", title: "every request: reads, watch starts, writes and non-resource requests", value: (r: CostRow) => r.calls },
  { id: "reads", label: "reads", title: "get, list and watch starts on resources", value: (r: CostRow) => r.reads },
  { id: "writes", label: "writes", title: "create, update, patch, delete (dry runs included)", value: (r: CostRow) => r.writes },
  { id: "other", label: "other", title: "requests on no resource: discovery, /healthz, /metrics, /openapi", value: (r: CostRow) => r.nonResource },
  {
    id: "cache",
    label: "lists: cache",
    title: "lists that asked for a resourceVersion (0, or NotOlderThan one): served from the watch cache",
    value: (r: CostRow) => r.lists.cache,
  },
  {
    id: "consistent",
    label: "lists: consistent",
    title:
      "lists without a resourceVersion, with an exact one, or the next page of one: read from etcd (from the watch cache where the API server has ConsistentListFromCache, 1.31 and later)",
    value: (r: CostRow) => r.lists.consistent + r.lists.exact + r.lists.continue,
  },
  {
    id: "watches",
    label: "watch starts",
    title: "watches started (their ResponseStarted stage, or their end where the log has none)",
    value: (r: CostRow) => r.watchStarts,
  },
  {
    id: "reestablishments",
    label: "re-established",
    title: "watch starts after each client's first on a kind in the range: a watch that ended and was started again",
    value: (r: CostRow) => r.reestablishments,
  },
  { id: "rejected", label: "429", title: "answered 429: rejected by API Priority and Fairness (or the client's own limit)", value: (r: CostRow) => r.rejected },
  {
    id: "noop",
    label: "no-op writes",
    title: "successful writes that changed nothing (from the writes the store keeps one by one)",
    value: (r: CostRow) => r.noopWrites ?? -1,
  },
] as const;

export type CostSort = (typeof COLUMNS)[number]["id"] | "change";

/** A change for the table: "+12 %", "−73.8 %", "new", "unchanged". */
const pct = (c: Change | undefined) => (c ? formatPct(c) : "");

export function ApiCostView({
  answer,
  markers,
  sort,
  onSort,
  client,
  onClient,
  onCompareAt,
  clientGo,
}: {
  answer: ApiCostAnswer;
  markers: Marker[];
  sort: CostSort;
  onSort: (sort: CostSort) => void;
  client: string | null;
  onClient: (client: string | null) => void;
  /** compare either side of a time (a recorded change's) */
  onCompareAt: (atMs: number) => void;
  /** client-go's own count over the range, by the label values of the scrape targets (a component's job, say) */
  clientGo?: Map<string, number>;
}) {
  const [open, setOpen] = useState<Set<string>>(new Set());
  const comparison = answer.comparison;
  const changeOf = (component: string) => comparison?.rows.find((r) => r.component === component && r.detail === "");
  const valueOf = (r: CostRow): number => {
    if (sort === "change") {
      const c = changeOf(r.component)?.calls;
      return c ? c.after - c.before : 0;
    }
    return COLUMNS.find((c) => c.id === sort)!.value(r);
  };
  // Change ranks by how much the calls moved, largest fall first; every other column largest first.
  const rows = [...answer.components].sort((a, b) =>
    sort === "change" ? valueOf(a) - valueOf(b) || b.calls - a.calls : valueOf(b) - valueOf(a) || a.client.localeCompare(b.client),
  );
  const toggle = (component: string) =>
    setOpen((was) => {
      const next = new Set(was);
      if (next.has(component)) next.delete(component);
      else next.add(component);
      return next;
    });
  const heading = (id: CostSort, label: string, title: string) => (
    <th className={`${cell} text-right font-medium`} title={title} aria-sort={sort === id ? "descending" : "none"}>
      <button type="button" onClick={() => onSort(id)} className={sort === id ? "font-semibold text-[var(--fg)]" : "hover:underline"}>
        {label}
        {sort === id ? " ▾" : ""}
      </button>
    </th>
  );
  const figures = (r: CostRow) =>
    COLUMNS.map((c) => (
      <td key={c.id} className={num} data-cell={c.id}>
        {c.id === "noop" && r.noopWrites === null ? "–" : formatNumber(c.value(r), true)}
      </td>
    ));
  const csvRows = () =>
    rows.flatMap((r) =>
      [r, ...r.members].map((m) => [
        r.component,
        m === r ? "" : m.client,
        ...COLUMNS.map((c) => (c.id === "noop" && m.noopWrites === null ? null : c.value(m))),
        ...(comparison
          ? [changeOf(r.component)?.calls.before ?? 0, changeOf(r.component)?.calls.after ?? 0, changeOf(r.component)?.calls.changePct ?? null]
          : []),
      ]),
    );
  const selected = client ?? "every component";
  // Releases and recorded rollouts inside the range, each a split to compare either side of.
  const changes = markers.filter((m) => (m.kind === "change" || m.kind === "release") && m.timeMs > answer.startMs && m.timeMs < answer.endMs).slice(0, 6);
  const t = answer.total;

  return (
    <section data-testid="api-cost" className="space-y-3 rounded-md border border-[var(--border)] bg-[var(--panel)] p-3">
      <div>
        <h2 className="text-sm font-semibold">API calls by component</h2>
        <p className="text-xs text-[var(--muted)]" data-testid="api-cost-summary">
          Every request the audit logs hold, reads and watches too, counted per minute: {formatNumber(t.calls, true)} calls in the range,{" "}
          {formatNumber(t.reads, true)} reads (get, list, watch starts), {formatNumber(t.writes, true)} writes and {formatNumber(t.nonResource, true)} on no
          resource. A component is a user agent&apos;s name; each of its service accounts is listed under it.
        </p>
        {answer.notes.map((note) => (
          <p key={note} data-testid="api-cost-note" className="mt-1 rounded border border-[var(--border)] px-2 py-1 text-xs">
            {note}
          </p>
        ))}
      </div>
      {!comparison && changes.length > 0 && (
        <div data-testid="compare-at-change" className="flex flex-wrap items-center gap-2 text-xs">
          <span className="text-[var(--muted)]">Compare before and after a recorded change:</span>
          {changes.map((m) => (
            <button
              key={`${m.timeMs}-${m.label}`}
              type="button"
              onClick={() => onCompareAt(m.timeMs)}
              className="rounded border border-[var(--border)] px-2 py-0.5"
            >
              {m.label} ({formatUtc(m.timeMs, false)})
            </button>
          ))}
        </div>
      )}
      {comparison && (
        <div data-testid="api-cost-changes" className="text-xs">
          <p className="text-[var(--muted)]">
            {formatUtc(comparison.before.startMs, false)}–{formatUtc(comparison.before.endMs, false)} UTC against {formatUtc(comparison.after.startMs, false)}–
            {formatUtc(comparison.after.endMs, false)} UTC
            {comparison.perHour
              ? ", per hour (the windows differ in length)"
              : ` (${formatDurationMs(comparison.before.endMs - comparison.before.startMs)} each)`}
            :
          </p>
          <ul className="list-disc pl-5">
            {comparison.rows
              .filter((r) => r.detail === "")
              .slice(0, 8)
              .map((r) => (
                <li key={r.component} data-component={r.component}>
                  {r.sentence}
                </li>
              ))}
          </ul>
        </div>
      )}
      {answer.byVerb.length > 0 && (
        <div data-testid="api-cost-chart">
          <div className="flex flex-wrap items-center gap-2 text-xs">
            <span className="font-medium">
              Calls by verb, per {formatDurationMs(answer.stepMs)}: {selected}
            </span>
            {client && (
              <button type="button" onClick={() => onClient(null)} className="rounded border border-[var(--border)] px-2 py-0.5">
                every component ✕
              </button>
            )}
          </div>
          <TimeSeriesChart series={answer.byVerb} unit="calls" stacked startMs={answer.startMs} endMs={answer.endMs} markers={markers} nameOf={(l) => l.verb} />
        </div>
      )}
      {answer.listStorms.length > 0 && (
        <div data-testid="list-storms" className="text-xs">
          <h3 className="font-semibold">LIST storms</h3>
          <p className="text-[var(--muted)]">
            Minutes in which at least {answer.minStormClients} clients listed one kind: each list reads the whole collection, from the watch cache where it
            asked for a resourceVersion, else from etcd (or the cache where the API server has ConsistentListFromCache).
          </p>
          <ul className="list-disc pl-5">
            {answer.listStorms.map((s) => (
              <li key={`${s.minuteMs}-${s.target}`} data-minute={s.minuteMs} data-target={s.target}>
                <span className="font-mono">{formatUtc(s.minuteMs, false)}</span> {s.target}: {formatNumber(s.clients, true)} clients listed it{" "}
                {formatNumber(s.lists, true)} times ({formatNumber(s.consistent, true)} from etcd, {formatNumber(s.fromCache, true)} from the cache
                {s.rejected > 0 ? `; ${formatNumber(s.rejected, true)} rejected (429)` : ""}):{" "}
                {s.components.map((c) => `${c.component} (${formatNumber(c.clients, true)} clients, ${formatNumber(c.lists, true)} lists)`).join(", ")}
              </li>
            ))}
          </ul>
        </div>
      )}
      {answer.flowSchemas.length > 0 && (
        <div data-testid="flow-schemas" className="overflow-x-auto text-xs">
          <h3 className="font-semibold">By API Priority and Fairness flow schema</h3>
          <p className="text-[var(--muted)]">
            Each call counted in the FlowSchema that took it (matched against the FlowSchemas the recorder read). Where a flow schema rejected, the clients
            named are the ones sending into it in the minutes it did.
          </p>
          <table className="w-full min-w-[40rem] tabular">
            <thead className="text-[var(--muted)]">
              <tr>
                <th className={`${cell} text-left font-medium`}>flow schema</th>
                <th className={`${cell} text-left font-medium`}>priority level</th>
                <th className={`${cell} text-right font-medium`}>calls</th>
                <th className={`${cell} text-right font-medium`}>rejected (429)</th>
                <th className={`${cell} text-left font-medium`}>clients (rejected / calls)</th>
              </tr>
            </thead>
            <tbody>
              {answer.flowSchemas.map((f) => (
                <tr key={f.flowSchema} data-flow-schema={f.flowSchema} className="border-t border-[var(--border)]">
                  <td className={`${cell} font-mono`}>{f.flowSchema}</td>
                  <td className={`${cell} font-mono`}>{f.priorityLevel}</td>
                  <td className={num}>{formatNumber(f.calls, true)}</td>
                  <td className={num}>
                    {formatNumber(f.rejected, true)}
                    {f.rejected > 0 && <span className="text-[var(--muted)]"> in {formatNumber(f.rejectingMinutes, true)} min</span>}
                  </td>
                  <td className={`${cell} break-all`}>
                    {f.clients
                      .slice(0, 5)
                      .map((c) => `${c.client} (${formatNumber(c.rejected, true)} / ${formatNumber(c.calls, true)})`)
                      .join(" · ")}
                    {f.clients.length > 5 ? ` · and ${f.clients.length - 5} more` : ""}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {rows.length > 0 ? (
        <div>
          <div className="mb-1 flex items-center gap-3">
            <span className="text-xs text-[var(--muted)]">Click a heading to rank by it; a component for its calls by verb.</span>
            <CsvLink
              name="api-calls"
              testId="api-cost-csv"
              header={["component", "client", ...COLUMNS.map((c) => c.label), ...(comparison ? ["calls before", "calls after", "change %"] : [])]}
              rows={csvRows}
            />
          </div>
          <div className="overflow-x-auto">
            <table data-testid="api-cost-table" className="w-full min-w-[64rem] text-sm tabular">
              <thead className="text-xs text-[var(--muted)]">
                <tr>
                  <th className={`${cell} text-left font-medium`}>component</th>
                  {COLUMNS.map((c) => (
                    <Fragment key={c.id}>{heading(c.id, c.label, c.title)}</Fragment>
                  ))}
                  {clientGo && (
                    <th
                      className={`${cell} text-right font-medium`}
                      title="client-go's own count of the component's calls over the range (rest_client_requests_total of the scrape target whose job, namespace or container is named like it); the audit log counts per user agent"
                    >
                      client-go
                    </th>
                  )}
                  {comparison && (
                    <>
                      <th className={`${cell} text-right font-medium`}>before</th>
                      <th className={`${cell} text-right font-medium`}>after</th>
                      {heading("change", "change", "how much the component's calls moved between the two windows (largest fall first)")}
                    </>
                  )}
                </tr>
              </thead>
              <tbody>
                {rows.map((r) => {
                  const moved: ComparedRow | undefined = changeOf(r.component);
                  return (
                    <Fragment key={r.component}>
                      <tr data-component={r.component} className="border-t border-[var(--border)]">
                        <td className={`${cell} font-mono text-xs`}>
                          <button type="button" className="break-all text-left text-[var(--accent)] hover:underline" onClick={() => onClient(r.component)}>
                            {r.component}
                          </button>
                          {r.members.length > 0 && (
                            <button type="button" onClick={() => toggle(r.component)} className="ml-2 text-[11px] text-[var(--muted)] hover:underline">
                              {open.has(r.component) ? "▾" : "▸"} {r.members.length} clients
                            </button>
                          )}
                          {r.members.length === 0 && <div className="text-[11px] text-[var(--muted)]">{r.client}</div>}
                          {r.watchLifetimes.length > 0 && (
                            <div className="text-[11px] text-[var(--muted)]" data-cell="lifetimes">
                              median watch life:{" "}
                              {r.watchLifetimes
                                .slice(0, 3)
                                .map((l) => `${l.target} ${(l.medianMs / 1000).toFixed(3)} s (${formatNumber(l.ended, true)} ended)`)
                                .join(" · ")}
                            </div>
                          )}
                        </td>
                        {figures(r)}
                        {clientGo && (
                          <td className={num} data-cell="client-go">
                            {clientGo.has(r.component) ? formatCount(clientGo.get(r.component)!) : "–"}
                          </td>
                        )}
                        {comparison && (
                          <>
                            <td className={num} data-cell="before">
                              {formatNumber(moved?.calls.before ?? 0, !comparison.perHour)}
                            </td>
                            <td className={num} data-cell="after">
                              {formatNumber(moved?.calls.after ?? 0, !comparison.perHour)}
                            </td>
                            <td className={num} data-cell="change">
                              {pct(moved?.calls)}
                            </td>
                          </>
                        )}
                      </tr>
                      {open.has(r.component) &&
                        r.members.map((m) => (
                          <tr key={m.client} data-member={m.client} className="border-t border-dashed border-[var(--border)] text-xs">
                            <td className={`${cell} pl-6 font-mono`}>
                              <button type="button" className="break-all text-left hover:underline" onClick={() => onClient(m.client)}>
                                {m.user}
                              </button>
                            </td>
                            {figures(m)}
                            {clientGo && <td />}
                            {comparison && <td colSpan={3} />}
                          </tr>
                        ))}
                    </Fragment>
                  );
                })}
              </tbody>
            </table>
          </div>
        </div>
      ) : (
        <p className="py-4 text-center text-sm text-[var(--muted)]">No API calls counted in this range.</p>
      )}
    </section>
  );
}
