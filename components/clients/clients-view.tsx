"use client";
/**
 * Clients: write requests from the ingested audit logs by client (user · user-agent name) over
 * time, per resource and per object with their top writers, and before/after a chosen time per client.
 */
import Link from "next/link";
import { ChartZoomContext } from "@/components/panels/chart-zoom";
import { parseAsString, useQueryStates } from "nuqs";
import { ApiNotices } from "@/components/objects/api-notices";
import { TimeSeriesChart } from "@/components/panels/time-series-chart";
import { RangeStatus } from "@/components/time-range/range-status";
import { MarkerList } from "@/components/panels/marker-list";
import { useViewRange } from "@/components/time-range/use-view-range";
import { ViewControls } from "@/components/time-range/view-controls";
import { formatDurationMs } from "@/lib/time/duration";
import { formatNumber } from "@/lib/format/number";
import { apiUrl, useApi, usePanel } from "@/lib/query/hooks";
import { useViewMarkers } from "@/components/panels/onset-marker";
import type { PanelData } from "@/lib/panels/run-panel";
import { atInside, clientsUrl } from "@/lib/panels/panel-url";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";
import { ApiCostView, type CostSort } from "./api-cost-view";
import { ClockFaults } from "@/components/objects/writer-faults";
import { ClientPanels } from "./client-panels";
import { AuditSources } from "./audit-sources";
import { AuditUpload } from "./audit-upload";
import { WritesTable, type WritesSort } from "./writes-table";
import { DEFAULT_FROM, DEFAULT_TO, parseAtParam } from "@/lib/time/range";
import { badValue } from "@/lib/format/param-notices";
import { formatUtc } from "@/lib/format/time";
import type { ClientsAnswer, TopEntry } from "@/lib/wire/clients";
import type { ApiCostAnswer } from "@/lib/wire/api-cost";

const state = {
  from: parseAsString.withDefault(DEFAULT_FROM),
  to: parseAsString.withDefault(DEFAULT_TO),
  cluster: parseAsString,
  resource: parseAsString,
  at: parseAsString,
  /** the API calls table's ranking, and the component whose calls by verb are drawn */
  sort: parseAsString,
  client: parseAsString,
  /** the write requests table's ranking */
  writesBy: parseAsString,
};

const cell = "px-2 py-1";
const num = `${cell} text-right font-mono`;

/**
 * client-go's count over the range per component label value (a job, namespace or container named like a component):
 * each series' total, its method and code summed.
 */
function clientGoTotals(panel: PanelData): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of panel.series) {
    const total = s.points.at(-1)?.[1] ?? 0;
    for (const [label, value] of Object.entries(s.labels))
      if (!["method", "code", "host", "series"].includes(label)) out.set(value, (out.get(value) ?? 0) + total);
  }
  return out;
}

/** The top writers, one a line. */
function Top({ top }: { top: TopEntry[] }) {
  return (
    <div className="text-[11px]">
      {top.map((t) => (
        <div key={t.client} className="break-all">
          {t.client} <span className="font-mono text-[var(--muted)]">{formatNumber(t.writes, true)}</span>
        </div>
      ))}
    </div>
  );
}

export function ClientsView({ initialNowMs, snapshot, prometheus }: { initialNowMs: number; snapshot?: SnapshotInfo; prometheus: boolean }) {
  const [url, setUrl] = useQueryStates(state, { history: "push" });
  const { startMs, endMs, errors, controls, onZoom } = useViewRange(
    initialNowMs,
    snapshot,
    url.from,
    url.to,
    (from, to) => void setUrl({ from, to, at: null }),
  );
  // A before/after time is used only where it is one inside the range; otherwise the page says so and compares nothing.
  const askedAtMs = parseAtParam(url.at);
  const atMs = atInside(askedAtMs, { startMs, endMs });
  const notices = [
    ...(url.at !== null && askedAtMs === undefined
      ? [badValue("before/after time", url.at, "a time in epoch milliseconds", "no before/after comparison")]
      : []),
    ...(askedAtMs !== undefined && atMs === undefined
      ? [`before/after time ${formatUtc(askedAtMs, askedAtMs % 60_000 !== 0)} is outside the range: no before/after comparison`]
      : []),
  ];
  const answer = useApi<ClientsAnswer>(
    clientsUrl({ startMs, endMs, cluster: url.cluster ?? undefined, resource: url.resource ?? undefined, atMs, snapshot: snapshot?.id }),
  );
  const calls = useApi<ApiCostAnswer>(
    apiUrl("/api/clients/calls", {
      from: startMs,
      to: endMs,
      cluster: url.cluster ?? undefined,
      resource: url.resource ?? undefined,
      at: atMs,
      client: url.client ?? undefined,
      snapshot: snapshot?.id,
    }),
  );
  const { markers, onset } = useViewMarkers(startMs, endMs, snapshot);
  // client-go's own count of each component's calls over the range, shown beside the audit log's.
  const clientGoShown = snapshot ? snapshot.panels.includes("client-request-totals") : prometheus;
  const clientGo = usePanel({ panel: "client-request-totals", startMs, endMs, width: 1000, snapshot: snapshot?.id }, clientGoShown).data?.data;
  const data = answer.data?.data;
  // The onset, offered as the before/after split where the range holds it.
  const offeredAtMs = onset && onset.timeMs > startMs && onset.timeMs < endMs ? onset.timeMs : undefined;

  return (
    <ChartZoomContext value={onZoom}>
      <main className="mx-auto max-w-[1600px] space-y-3 p-3">
        <div className="flex flex-wrap items-center gap-3 text-sm">
          <h1 className="text-lg font-semibold">Clients</h1>
          <label className="flex items-center gap-1 text-xs">
            cluster
            <select
              aria-label="cluster"
              value={url.cluster ?? ""}
              onChange={(e) => void setUrl({ cluster: e.target.value || null })}
              className="rounded border border-[var(--border)] bg-transparent px-1 py-0.5"
            >
              <option value="">every cluster</option>
              {(data?.clusters ?? []).map((c) => (
                <option key={c}>{c}</option>
              ))}
            </select>
          </label>
          {url.resource && (
            <button
              type="button"
              onClick={() => void setUrl({ resource: null })}
              className="rounded border border-[var(--border)] px-2 py-0.5 text-xs"
              title="show every resource"
            >
              {url.resource} ✕
            </button>
          )}
          <ViewControls
            snapshot={snapshot}
            {...controls}
            download={{ view: "objects", cluster: url.cluster ?? undefined, resource: url.resource ?? undefined, at: atMs }}
          />
        </div>
        <RangeStatus snapshot={snapshot} startMs={startMs} endMs={endMs} errors={errors} fallback="the last 6 hours" notices={notices} />
        <MarkerList markers={markers} />
        {snapshot ? (
          <p className="text-xs text-[var(--muted)]">
            The snapshot&apos;s audit requests. To add your own audit log, open the{" "}
            <Link prefetch={false} href="/clients" className="text-[var(--accent)] hover:underline">
              live Clients page
            </Link>
            .
          </p>
        ) : (
          <>
            <AuditSources />
            <AuditUpload />
          </>
        )}
        <ApiNotices error={calls.error} answer={calls.data} retry={calls.refetch} />
        {calls.data?.data && (
          <ApiCostView
            answer={calls.data.data}
            markers={markers}
            sort={(url.sort as CostSort | null) ?? "calls"}
            onSort={(sort) => void setUrl({ sort: sort === "calls" ? null : sort })}
            client={url.client}
            onClient={(client) => void setUrl({ client })}
            onCompareAt={(at) => void setUrl({ at: String(at) })}
            clientGo={clientGo ? clientGoTotals(clientGo) : undefined}
          />
        )}
        {(snapshot ? snapshot.panels.includes("client-requests") : prometheus) && (
          <ClientPanels startMs={startMs} endMs={endMs} markers={markers} snapshot={snapshot?.id} />
        )}
        <ApiNotices error={answer.error} answer={answer.data} retry={answer.refetch} />
        <section
          data-testid="clients-chart"
          data-state={answer.isLoading ? "loading" : data ? "ready" : "idle"}
          className="rounded-md border border-[var(--border)] bg-[var(--panel)] p-3"
        >
          <h2 className="text-sm font-semibold">Write requests by client</h2>
          <p className="mb-2 text-xs text-[var(--muted)]">
            Completed create, update, patch and delete requests from the audit log, per {data ? formatDurationMs(data.stepMs) : "step"}. A client is the user
            and the user agent&apos;s name (its version left out, so a rollout keeps one line).
            {data ? ` ${formatNumber(data.total, true)} requests in the range.` : ""}
            {data && data.neverStored > 0 && (
              <span data-testid="never-stored">
                {" "}
                {formatNumber(data.neverStored, true)} of them are access or token reviews and TokenRequests, which the API server answers without storing
                anything.
              </span>
            )}
          </p>
          {data && data.series.length > 0 && (
            <TimeSeriesChart series={data.series} unit="writes" stacked startMs={startMs} endMs={endMs} markers={markers} nameOf={(l) => l.client} />
          )}
          {data && data.total === 0 && <p className="py-6 text-center text-sm text-[var(--muted)]">No audit write requests in this range.</p>}
        </section>
        {data && data.total > 0 && (
          <>
            <WritesTable
              answer={data}
              stale={answer.isFetching && !answer.isLoading}
              atMs={atMs}
              offeredAtMs={offeredAtMs}
              onCompareAt={(at) => void setUrl({ at: at === null ? null : String(at) })}
              middleMs={Math.round((startMs + endMs) / 2 / 60_000) * 60_000}
              sort={(url.writesBy as WritesSort | null) ?? "writes"}
              onSort={(writesBy) => void setUrl({ writesBy: writesBy === "writes" ? null : writesBy })}
            />
            <div className="grid gap-3 xl:grid-cols-2">
              <section data-testid="clients-resources" className="overflow-x-auto rounded-md border border-[var(--border)] bg-[var(--panel)] p-3">
                <h2 className="mb-2 text-sm font-semibold">Top writers per resource</h2>
                <table className="w-full min-w-[32rem] text-sm tabular">
                  <tbody>
                    {data.byResource.map((r) => (
                      <tr key={r.resource} className="border-t border-[var(--border)]">
                        <td className={`${cell} font-mono text-xs`}>
                          <button
                            type="button"
                            className="break-all text-left text-[var(--accent)] hover:underline"
                            onClick={() => void setUrl({ resource: r.resource.split("/")[0] })}
                            title="only this resource"
                          >
                            {r.resource}
                          </button>
                          {r.neverStored && (
                            <div className="text-[11px] text-[var(--muted)]" title="answered without storing anything">
                              never stored
                            </div>
                          )}
                        </td>
                        <td className={num}>{formatNumber(r.writes, true)}</td>
                        <td className={cell}>
                          <Top top={r.top} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </section>
              <section data-testid="clients-objects" className="overflow-x-auto rounded-md border border-[var(--border)] bg-[var(--panel)] p-3">
                <h2 className="mb-2 text-sm font-semibold">Top writers per object</h2>
                <table className="w-full min-w-[32rem] text-sm tabular">
                  <tbody>
                    {data.byObject.map((o) => (
                      <tr key={`${o.resource}/${o.namespace}/${o.name}`} data-object={`${o.namespace}/${o.name}`} className="border-t border-[var(--border)]">
                        <td className={`${cell} font-mono text-xs`}>
                          <div className="break-all">
                            {o.namespace ? `${o.namespace}/` : ""}
                            {o.name}
                          </div>
                          <div className="text-[11px] text-[var(--muted)]">{o.resource}</div>
                        </td>
                        <td className={num}>{formatNumber(o.writes, true)}</td>
                        <td className={`${num} whitespace-nowrap`} title="no-op writes">
                          {o.noop ? `${formatNumber(o.noop, true)} no-op` : ""}
                        </td>
                        <td className={cell}>
                          <Top top={o.top} />
                        </td>
                      </tr>
                    ))}
                  </tbody>
                </table>
              </section>
            </div>
          </>
        )}
        {/* Each writer's echoes, clock-only and ignored-only writes, and the condition clocks it left wrong. */}
        <ClockFaults scope={{ cluster: url.cluster ?? undefined, from: startMs, to: endMs, snapshot: snapshot?.id }} />
      </main>
    </ChartZoomContext>
  );
}
