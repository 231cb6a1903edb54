"use client";
/**
 * Field churn: the changed paths of the objects in scope (cluster, kind, namespace) ranked by changes, split by
 * writer, by whether the writes changed what consumers route on, and over the range.
 */
import Link from "next/link";
import { useMemo } from "react";
import { useQueryStates } from "nuqs";
import { useSeriesColors } from "@/components/panels/use-series-colors";
import { ApiNotices, StoreLoading } from "./api-notices";
import { RangeStatus } from "@/components/time-range/range-status";
import { useViewRange } from "@/components/time-range/use-view-range";
import { ViewControls } from "@/components/time-range/view-controls";
import { formatNumber } from "@/lib/format/number";
import { apiUrl, useApi } from "@/lib/query/hooks";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";
import { objectFilterState } from "./object-link";
import type { FieldsAnswer } from "@/lib/wire/objects";
import { CLASS_COLORS } from "./object-link";
import { ScopeSelectors, useKnownScope, useLearnedKinds } from "./scope-selectors";
import { Sparkline } from "./sparkline";
import { ClockFaults } from "./writer-faults";
import { CsvLink } from "@/components/panels/csv-link";

export function FieldsView({ initialNowMs, snapshot }: { initialNowMs: number; snapshot?: SnapshotInfo }) {
  const [url, setUrl] = useQueryStates(objectFilterState, { history: "push" });
  const { startMs, endMs, errors, controls } = useViewRange(initialNowMs, snapshot, url.from, url.to, (from, to) => void setUrl({ from, to }));
  const known = useKnownScope(url);
  const filter = known.scope;
  const answer = useApi<FieldsAnswer>(apiUrl("/api/fields", { ...filter, from: startMs, to: endMs, snapshot: snapshot?.id }));
  useLearnedKinds(known, answer.data?.data.kinds);
  const held = answer.data?.data.rows;
  const rows = held ?? [];
  const writers = useMemo(() => [...new Set((held ?? []).flatMap((r) => r.writers.map((w) => w.writer)))], [held]);
  // A writer is the same colour here as on the Clients chart.
  const writerColors = useSeriesColors(writers);
  const colorOf = (writer: string) => writerColors[writers.indexOf(writer)];
  const max = Math.max(1, ...rows.map((r) => r.changes));
  const scope = [filter.kind ?? "every kind", filter.cluster ? `on ${filter.cluster}` : "", filter.namespace ? `in ${filter.namespace}` : ""]
    .filter(Boolean)
    .join(" ");

  return (
    <main className="mx-auto max-w-[1600px] space-y-3 p-3">
      <div className="flex flex-wrap items-center gap-3 text-sm">
        <h1 className="text-lg font-semibold">Field churn</h1>
        <ScopeSelectors kinds={answer.data?.data.kinds ?? []} scope={known.selected} onChange={(next) => void setUrl(next)} />
        <span className="text-[var(--muted)]" data-testid="fields-scope">
          {scope}
        </span>
        <Link
          prefetch={false}
          className="text-[var(--accent)] hover:underline"
          href={apiUrl("/objects", { ...filter, from: startMs, to: endMs, snapshot: snapshot?.id })}
        >
          ← Objects
        </Link>
        <ViewControls snapshot={snapshot} {...controls} download={{ view: "objects", ...filter }} />
      </div>
      <RangeStatus snapshot={snapshot} startMs={startMs} endMs={endMs} errors={errors} fallback="the last 6 hours" notices={known.notices} />
      <ApiNotices error={answer.error} answer={answer.data} retry={answer.refetch} />
      <section
        data-testid="fields-table"
        // Still showing the previous answer while the new one loads.
        data-updating={answer.isFetching && !answer.isLoading ? "" : undefined}
        data-state={answer.isLoading ? "loading" : answer.data ? "ready" : "idle"}
        className="overflow-x-auto rounded-md border border-[var(--border)] bg-[var(--panel)] p-3"
      >
        {rows.length > 0 && (
          <div className="float-right ml-3">
            <CsvLink
              name="field-churn"
              testId="fields-csv"
              header={["path", "changes", "objects", "routed", "unrouted", "writers"]}
              rows={() => rows.map((r) => [r.path, r.changes, r.objects, r.routed, r.unrouted, r.writers.map((w) => `${w.writer} ${w.changes}`).join("; ")])}
            />
          </div>
        )}
        <p className="mb-2 text-xs text-[var(--muted)]">
          Every changed field path across objects (ignored paths such as resourceVersion and managedFields left out), ranked by how often it changed, with the
          writers that changed it.
        </p>
        <div className="mb-2 flex flex-wrap gap-3 text-xs">
          {writers.map((w) => (
            <span key={w} className="flex items-center gap-1">
              <span data-legend-swatch={w} className="inline-block h-2.5 w-2.5 rounded-sm" style={{ background: colorOf(w) }} />
              {w}
            </span>
          ))}
        </div>
        <table className="w-full text-sm tabular">
          <thead className="text-xs text-[var(--muted)]">
            <tr>
              <th className="px-2 py-1 text-left font-medium">field</th>
              <th className="px-2 py-1 text-right font-medium">changes</th>
              <th className="px-2 py-1 text-right font-medium">objects</th>
              <th className="px-2 py-1 text-right font-medium" title="changes made by writes that changed what consumers route on">
                routed
              </th>
              <th className="px-2 py-1 text-right font-medium" title="changes made by writes that left what consumers route on as it was">
                unrouted
              </th>
              <th className="w-1/3 px-2 py-1 text-left font-medium">by writer</th>
              <th className="px-2 py-1 text-left font-medium">changes over time</th>
            </tr>
          </thead>
          <tbody>
            {rows.map((r) => (
              <tr key={r.path} data-field={r.path} className="border-t border-[var(--border)]">
                <td className="min-w-[12rem] px-2 py-1 font-mono text-xs break-all">{r.path}</td>
                <td className="px-2 py-1 text-right font-mono" data-cell="changes">
                  {formatNumber(r.changes, true)}
                </td>
                <td className="px-2 py-1 text-right font-mono">{formatNumber(r.objects, true)}</td>
                <td className="px-2 py-1 text-right font-mono" data-cell="routed" style={{ color: r.routed ? CLASS_COLORS.routed : undefined }}>
                  {formatNumber(r.routed, true)}
                </td>
                <td className="px-2 py-1 text-right font-mono" data-cell="unrouted">
                  {formatNumber(r.unrouted, true)}
                </td>
                <td className="px-2 py-1">
                  <div
                    className="flex h-3 overflow-hidden rounded"
                    style={{ width: `${(r.changes / max) * 100}%` }}
                    title={r.writers.map((w) => `${w.writer}: ${w.changes}`).join("\n")}
                  >
                    {r.writers.map((w) => (
                      <span key={w.writer} data-writer={w.writer} style={{ width: `${(w.changes / r.changes) * 100}%`, background: colorOf(w.writer) }} />
                    ))}
                  </div>
                  <div className="text-[11px] text-[var(--muted)]">{r.writers.map((w) => `${w.writer} ${formatNumber(w.changes, true)}`).join(" · ")}</div>
                </td>
                <td className="px-2 py-1" data-cell="sparkline" data-values={r.sparkline.join(",")}>
                  <Sparkline values={r.sparkline} label={`${r.path}: changes over the range in ${r.sparkline.length} slices`} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        {answer.isLoading && <StoreLoading snapshot={snapshot !== undefined} />}
        {answer.data && rows.length === 0 && <p className="py-6 text-center text-sm text-[var(--muted)]">No field changes in this range.</p>}
      </section>
      <ClockFaults scope={{ ...filter, from: startMs, to: endMs, snapshot: snapshot?.id }} writers={false} />
    </main>
  );
}
