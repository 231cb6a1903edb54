"use client";
/**
 * Objects: which objects are written most in the range, how many writes changed what the
 * consumer routes on and how many did not, which fields changed and who wrote them.
 */
import Link from "next/link";
import { WRITE_CLASSES } from "@/lib/churn/write-class";
import { parseAsInteger, parseAsString, parseAsStringLiteral, useQueryStates } from "nuqs";
import { ApiNotices, StoreLoading } from "./api-notices";
import { RangeStatus } from "@/components/time-range/range-status";
import { useViewRange } from "@/components/time-range/use-view-range";
import { ViewControls } from "@/components/time-range/view-controls";
import { formatNumber } from "@/lib/format/number";
import { apiUrl, useApi } from "@/lib/query/hooks";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";
import { CLASS_COLORS, objectFilterState, timelineHref } from "./object-link";
import { ScopeSelectors, SELECT_CLASS, useKnownScope, useLearnedKinds, useSortNotices } from "./scope-selectors";
import { Sparkline } from "./sparkline";
import { ClockFaults, ClockWarning, Flaps } from "./writer-faults";
import { CsvLink } from "@/components/panels/csv-link";
import { OBJECT_SORTS, type ObjectSort, type ObjectsAnswer } from "@/lib/wire/objects";

const urlState = {
  ...objectFilterState,
  class: parseAsString,
  page: parseAsInteger.withDefault(1),
  sort: parseAsStringLiteral(OBJECT_SORTS).withDefault("writes"),
  /** heartbeat-only objects (Lease renewals) are hidden unless this says "show" */
  heartbeats: parseAsString,
  /** flaps: undone within this many seconds; the hold-down replayed: field=value held `hold` seconds */
  flapWindow: parseAsInteger.withDefault(60),
  holdField: parseAsString.withDefault("online"),
  holdValue: parseAsString.withDefault("false"),
  hold: parseAsInteger.withDefault(30),
};

/** The table's columns: a header, the sort it sets (if any), and whether it holds a number. */
const COLUMNS: { header: string; sort?: ObjectSort; numeric?: boolean }[] = [
  { header: "object", sort: "name" },
  { header: "kind" },
  { header: "writes", sort: "writes", numeric: true },
  { header: "routed", sort: "routed", numeric: true },
  { header: "unrouted", sort: "unrouted", numeric: true },
  { header: "no-op", sort: "noop", numeric: true },
  { header: "create", sort: "create", numeric: true },
  { header: "delete", sort: "delete", numeric: true },
  { header: "wasted", sort: "wasted", numeric: true },
  { header: "top changed fields" },
  { header: "writers" },
  { header: "writes over time" },
];

export function ObjectsView({ initialNowMs, snapshot }: { initialNowMs: number; snapshot?: SnapshotInfo }) {
  const [url, setUrl] = useQueryStates(urlState, { history: "push" });
  const { startMs, endMs, errors, controls } = useViewRange(initialNowMs, snapshot, url.from, url.to, (from, to) => void setUrl({ from, to, page: 1 }));
  const known = useKnownScope(url);
  const filter = { ...known.scope, class: url.class ?? undefined };
  const notices = [...known.notices, ...useSortNotices()];
  const heartbeats = url.heartbeats === "show" ? "show" : "hide";
  const scope = {
    cluster: filter.cluster,
    group: filter.group,
    kind: filter.kind,
    namespace: filter.namespace,
    from: startMs,
    to: endMs,
    snapshot: snapshot?.id,
  };
  const answer = useApi<ObjectsAnswer>(
    apiUrl("/api/objects", { ...filter, from: startMs, to: endMs, page: url.page, pageSize: 50, sort: url.sort, heartbeats, snapshot: snapshot?.id }),
  );
  const data = answer.data?.data;
  useLearnedKinds(known, data?.kinds);
  const pages = data ? Math.max(1, Math.ceil(data.total / data.pageSize)) : 1;

  return (
    <main className="mx-auto max-w-[1600px] space-y-3 p-3">
      <div className="flex flex-wrap items-center gap-3 text-sm">
        <h1 className="text-lg font-semibold">Objects</h1>
        <ScopeSelectors kinds={data?.kinds ?? []} scope={known.selected} onChange={(scope) => void setUrl({ ...scope, page: 1 })} />
        <select
          data-testid="class-select"
          className={SELECT_CLASS}
          value={url.class ?? ""}
          onChange={(e) => void setUrl({ class: e.target.value || null, page: 1 })}
        >
          <option value="">Any class</option>
          {WRITE_CLASSES.map((c) => (
            <option key={c}>{c}</option>
          ))}
        </select>
        <label
          className="flex items-center gap-1"
          title="Objects every write of which is a heartbeat (Lease renewals): expected churn that would fill the top of the ranking"
        >
          <input
            type="checkbox"
            data-testid="hide-heartbeats"
            checked={heartbeats === "hide"}
            onChange={(e) => void setUrl({ heartbeats: e.target.checked ? null : "show", page: 1 })}
          />
          hide heartbeat-only
        </label>
        <Link
          prefetch={false}
          className="text-[var(--accent)] hover:underline"
          href={apiUrl("/fields", { ...filter, class: undefined, from: startMs, to: endMs, snapshot: snapshot?.id })}
        >
          Field churn →
        </Link>
        <Link
          prefetch={false}
          data-testid="lanes-link"
          className="text-[var(--accent)] hover:underline"
          href={apiUrl("/objects/lanes", { ...filter, class: undefined, from: startMs, to: endMs, snapshot: snapshot?.id })}
          title="Every object of this scope as a lane on one time axis: when what consumers route on changed, and when it did not"
        >
          Lanes →
        </Link>
        <ViewControls snapshot={snapshot} {...controls} download={{ view: "objects", ...filter, class: undefined }} />
      </div>
      <RangeStatus snapshot={snapshot} startMs={startMs} endMs={endMs} errors={errors} fallback="the last 6 hours" notices={notices} />
      <ApiNotices error={answer.error} answer={answer.data} retry={answer.refetch} />
      <ClockWarning scope={scope} />
      <section
        data-testid="objects-table"
        // Still showing the previous answer while the new one loads.
        data-updating={answer.isFetching && !answer.isLoading ? "" : undefined}
        data-state={answer.isLoading ? "loading" : data ? "ready" : "idle"}
        className="overflow-x-auto rounded-md border border-[var(--border)] bg-[var(--panel)] p-3"
      >
        {data && data.rows.length > 0 && (
          <div className="float-right ml-3">
            <CsvLink
              name="objects"
              testId="objects-csv"
              header={[
                "cluster",
                "group",
                "kind",
                "namespace",
                "name",
                "writes",
                "routed",
                "unrouted",
                "no-op",
                "unknown",
                "create",
                "delete",
                "heartbeat",
                "wasted ratio",
                "writers",
              ]}
              rows={() =>
                data.rows.map((r) => [
                  r.cluster,
                  r.group,
                  r.kind,
                  r.namespace,
                  r.name,
                  r.writes,
                  r.routed,
                  r.unrouted,
                  r.noop,
                  r.unknown,
                  r.create,
                  r.delete,
                  r.heartbeat,
                  r.wastedRatio,
                  r.writers.map((w) => `${w.writer} ${w.writes}`).join("; "),
                ])
              }
            />
          </div>
        )}
        <p className="mb-2 text-xs text-[var(--muted)]">
          Objects ranked by writes in the range. <span style={{ color: CLASS_COLORS.routed }}>routed</span>: the write changed what the consumer acts on;{" "}
          <span style={{ color: CLASS_COLORS.unrouted }}>unrouted</span>: something changed, but not that;{" "}
          <span style={{ color: CLASS_COLORS["no-op"] }}>no-op</span>: the request changed nothing (audit logs only); unknown: an audit write whose result the
          log does not show (no bodies, or another kind, as kubectl scale's), the first seen, or one after such a write. Wasted = (no-op + unrouted) ÷ writes;
          what the no-op writes were (echoes, ignored-only, clock-only) is told by writer below.
        </p>
        <table className="w-full text-sm tabular">
          <thead className="text-xs text-[var(--muted)]">
            <tr>
              {COLUMNS.map(({ header, sort, numeric }) => (
                <th
                  key={header}
                  aria-sort={sort && sort === url.sort ? (sort === "name" ? "ascending" : "descending") : undefined}
                  className={`px-2 py-1 font-medium ${numeric ? "text-right" : "text-left"}`}
                >
                  {sort ? (
                    <button
                      type="button"
                      data-sort={sort}
                      className={`hover:underline ${sort === url.sort ? "font-semibold text-[var(--fg)]" : ""}`}
                      title={
                        sort === "name"
                          ? "Sort by namespace and name"
                          : `Sort by ${header}, most first${sort === "writes" && heartbeats === "hide" ? " (besides heartbeats, while they are hidden)" : ""}`
                      }
                      onClick={() => void setUrl({ sort: sort === "writes" ? null : sort, page: 1 })}
                    >
                      {header}
                      {sort === url.sort ? (sort === "name" ? " ▲" : " ▼") : ""}
                    </button>
                  ) : (
                    header
                  )}
                </th>
              ))}
            </tr>
          </thead>
          <tbody>
            {(data?.rows ?? []).map((row) => (
              <tr
                key={`${row.cluster}/${row.group}/${row.kind}/${row.namespace}/${row.name}`}
                data-object={`${row.cluster}/${row.kind}/${row.namespace}/${row.name}`}
                data-heartbeats={row.heartbeat}
                className="border-t border-[var(--border)] align-top"
              >
                <td className="px-2 py-1">
                  <Link
                    prefetch={false}
                    className="text-[var(--accent)] hover:underline"
                    href={timelineHref(row, { from: startMs, to: endMs, snapshot: snapshot?.id })}
                  >
                    {row.namespace ? `${row.namespace}/` : ""}
                    {row.name}
                  </Link>
                  <div className="text-[11px] text-[var(--muted)]">{row.cluster}</div>
                </td>
                <td className="px-2 py-1">{row.kind}</td>
                <td className="px-2 py-1 text-right font-mono" data-cell="writes">
                  {formatNumber(row.writes, true)}
                  {heartbeats === "hide" && row.heartbeat > 0 ? (
                    <div
                      className="text-[11px] text-[var(--muted)]"
                      data-testid="beside-heartbeats"
                      title="the writes it is ranked by while heartbeats are hidden"
                    >
                      {formatNumber(row.writes - row.heartbeat, true)} besides heartbeats
                    </div>
                  ) : null}
                </td>
                <td className="px-2 py-1 text-right font-mono" data-cell="routed" style={{ color: row.routed ? CLASS_COLORS.routed : undefined }}>
                  {formatNumber(row.routed, true)}
                </td>
                <td className="px-2 py-1 text-right font-mono" data-cell="unrouted">
                  {formatNumber(row.unrouted, true)}
                  {row.heartbeat ? (
                    <span className="text-[var(--muted)]" title="heartbeat writes (expected churn)">
                      {" "}
                      ({formatNumber(row.heartbeat, true)} hb)
                    </span>
                  ) : null}
                </td>
                <td className="px-2 py-1 text-right font-mono" data-cell="noop">
                  {formatNumber(row.noop, true)}
                  {row.periodicNoop ? (
                    <div
                      data-testid="periodic-noop"
                      className="whitespace-nowrap rounded bg-[var(--warn-bg)] px-1 text-[11px] text-[var(--warn-fg)]"
                      title={`${row.periodicNoop.writes} no-op writes about every ${row.periodicNoop.everySeconds} s, mostly by ${row.periodicNoop.writer}: a writer re-sending unchanged state on a timer`}
                    >
                      every {row.periodicNoop.everySeconds} s
                    </div>
                  ) : null}
                  {row.unknown ? (
                    <div
                      className="text-[11px] text-[var(--muted)]"
                      title="audit writes whose result the log does not show (no bodies, or another kind, as kubectl scale's), the first seen, or after such a write: counted, not classified"
                    >
                      {formatNumber(row.unknown, true)} unknown
                    </div>
                  ) : null}
                </td>
                <td className="px-2 py-1 text-right font-mono">{formatNumber(row.create, true)}</td>
                <td className="px-2 py-1 text-right font-mono">{formatNumber(row.delete, true)}</td>
                <td className="whitespace-nowrap px-2 py-1 text-right font-mono" data-cell="wasted">
                  {(row.wastedRatio * 100).toFixed(1)} %
                </td>
                <td className="max-w-[26rem] px-2 py-1 font-mono text-[11px]" data-cell="fields">
                  {row.topFields.map((f) => (
                    <div key={f.path} className="truncate" title={f.path}>
                      {f.path} <span className="text-[var(--muted)]">×{formatNumber(f.changes, true)}</span>
                    </div>
                  ))}
                </td>
                <td className="px-2 py-1 text-[11px]" data-cell="writers">
                  {row.writers.map((w) => (
                    <div key={w.writer}>
                      {w.writer} <span className="text-[var(--muted)]">{formatNumber(w.writes, true)}</span>
                    </div>
                  ))}
                </td>
                <td className="px-2 py-1">
                  <Sparkline values={row.sparkline} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {answer.isLoading && <StoreLoading snapshot={snapshot !== undefined} />}
        {data && data.rows.length === 0 && <p className="py-6 text-center text-sm text-[var(--muted)]">No object writes in this range.</p>}
        {data && data.heartbeatOnly.objects > 0 && (
          <p data-testid="heartbeat-only" className="mt-2 text-xs text-[var(--muted)]">
            {formatNumber(data.heartbeatOnly.objects, true)} heartbeat-only object{data.heartbeatOnly.objects === 1 ? "" : "s"} (every write a heartbeat, as
            Lease renewals are) with {formatNumber(data.heartbeatOnly.writes, true)} writes hidden; the others rank by their writes besides heartbeats.{" "}
            <button type="button" className="text-[var(--accent)] hover:underline" onClick={() => void setUrl({ heartbeats: "show", page: 1 })}>
              Show them
            </button>
          </p>
        )}
        <div className="mt-2 flex items-center gap-2 text-xs">
          <button
            type="button"
            className="rounded border border-[var(--border)] px-2 py-0.5 disabled:opacity-40"
            disabled={url.page <= 1}
            onClick={() => void setUrl({ page: url.page - 1 })}
          >
            ← previous
          </button>
          <span data-testid="page-status">
            page {url.page}
            {data ? ` of ${pages} · ${formatNumber(data.total, true)} objects` : ""}
          </span>
          <button
            type="button"
            className="rounded border border-[var(--border)] px-2 py-0.5 disabled:opacity-40"
            disabled={url.page >= pages}
            onClick={() => void setUrl({ page: url.page + 1 })}
          >
            next →
          </button>
        </div>
      </section>
      <ClockFaults scope={scope} />
      <Flaps
        scope={scope}
        settings={{ window: url.flapWindow, holdField: url.holdField, holdValue: url.holdValue, hold: url.hold }}
        onSettings={(next) =>
          void setUrl({
            ...(next.window !== undefined && { flapWindow: next.window }),
            ...(next.holdField !== undefined && { holdField: next.holdField }),
            ...(next.holdValue !== undefined && { holdValue: next.holdValue }),
            ...(next.hold !== undefined && { hold: next.hold }),
          })
        }
      />
    </main>
  );
}
