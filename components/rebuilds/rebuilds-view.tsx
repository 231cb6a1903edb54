"use client";
/**
 * The Edge rebuilds page: per site, how often and how long the edge rebuilds its whole
 * configuration, whether the rebuild loop saturates, and how many rebuilds each upstream write
 * buys. Every panel answers for all sites; the site selector filters in the browser.
 */
import { MarkerList } from "@/components/panels/marker-list";
import { ChartZoomContext } from "@/components/panels/chart-zoom";
import { parseAsString, useQueryStates } from "nuqs";
import { PanelFrame } from "@/components/panels/panel-frame";
import { PanelNotShown } from "@/components/panels/panel-not-shown";
import { TimeSeriesChart } from "@/components/panels/time-series-chart";
import { useElementWidth, useWidthCookie } from "@/components/panels/use-element-width";
import { chartWidths } from "@/lib/panels/panel-url";
import { RangeStatus } from "@/components/time-range/range-status";
import { UtcTimeInput } from "@/components/time-range/utc-time-input";
import { ViewControls } from "@/components/time-range/view-controls";
import { useViewRange } from "@/components/time-range/use-view-range";
import { formatNumber } from "@/lib/format/number";
import { formatRange, formatUtc } from "@/lib/format/time";
import type { PanelQueryInput } from "@/lib/panels/panel-url";
import { usePanel } from "@/lib/query/hooks";
import { useViewMarkers } from "@/components/panels/onset-marker";
import type { ChartMarker } from "@/components/panels/time-series-chart";
import { findRebuildPanel } from "@/lib/rebuilds/catalog";
import { REBUILD_CHARTS, REBUILDS_DEFAULT_FROM, rebuildInputs, rebuildRequests } from "@/lib/rebuilds/requests";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";
import { badValue, unknownValue } from "@/lib/format/param-notices";
import { parseAtParam } from "@/lib/time/range";
import { FlapChanges } from "./flap-changes";
import { RebuildSummaryTable } from "./summary-table";

const urlState = {
  from: parseAsString.withDefault(REBUILDS_DEFAULT_FROM),
  to: parseAsString.withDefault("now"),
  site: parseAsString,
  at: parseAsString,
};

interface Props {
  initialNowMs: number;
  siteLabel: string;
  snapshot?: SnapshotInfo;
}

export function RebuildsView({ initialNowMs, siteLabel: configuredSiteLabel, snapshot }: Props) {
  const [url, setUrl] = useQueryStates(urlState, { history: "push" });
  const [mainRef, mainWidth] = useElementWidth<HTMLElement>();
  const { startMs, endMs, errors, controls, onZoom } = useViewRange(initialNowMs, snapshot, url.from, url.to, (from, to) => void setUrl({ from, to }));
  const atMs = parseAtParam(url.at);
  const calls = rebuildRequests({ startMs, endMs, atMs });
  const siteLabel = snapshot?.siteLabel ?? configuredSiteLabel;
  const siteOf = (labels: Record<string, string>) => labels[siteLabel] ?? labels.member_cluster ?? "";
  const nameOf = (labels: Record<string, string>) =>
    [labels.series, labels.part, siteOf(labels), labels.kind, labels.operationResult].filter(Boolean).join(" · ") || "total";
  const asked = url.site ?? undefined;
  const inputs = rebuildInputs(calls, chartWidths(mainWidth), snapshot?.id);
  useWidthCookie(mainWidth);
  const enabled = mainWidth > 0;

  const rate = usePanel(inputs.charts["rebuild-rate"], enabled);
  const summary = usePanel(inputs.summary, enabled);
  const summaryBefore = usePanel(inputs.summaryBefore, enabled);
  const beforeAt = usePanel(inputs.beforeAt ?? inputs.summary, enabled && inputs.beforeAt !== undefined);
  const afterAt = usePanel(inputs.afterAt ?? inputs.summary, enabled && inputs.afterAt !== undefined);
  const sites = [...new Set((rate.data?.data.series ?? []).map((s) => siteOf(s.labels)))].sort();
  // A site the range does not have shows every site, and says so, rather than empty charts.
  const unknownSite = asked !== undefined && rate.data !== undefined && !sites.includes(asked);
  const site = unknownSite ? undefined : asked;
  const notices = [
    ...(unknownSite ? [unknownValue("site", asked, sites, "showing all sites")] : []),
    ...(url.at !== null && atMs === undefined ? [badValue("before/after time", url.at, "a time in epoch milliseconds", "no before/after comparison")] : []),
    ...(atMs !== undefined && calls.beforeAt === undefined
      ? [`before/after time ${formatUtc(atMs, atMs % 60_000 !== 0)} is outside the range: no before/after comparison`]
      : []),
  ];
  const profile = rate.data?.data.profile;
  const { markers, onset } = useViewMarkers(startMs, endMs, snapshot);

  return (
    <ChartZoomContext value={onZoom}>
      <main ref={mainRef} data-view="rebuilds" className="mx-auto max-w-[1600px] space-y-3 p-3">
        <div className="flex flex-wrap items-center gap-3">
          <h1 className="text-lg font-semibold">Edge rebuilds</h1>
          <label className="flex items-center gap-1 text-sm">
            <span className="text-[var(--muted)]">Site</span>
            <select
              data-testid="site-select"
              className="rounded border border-[var(--border)] bg-[var(--panel)] px-2 py-1"
              value={site ?? ""}
              onChange={(e) => void setUrl({ site: e.target.value || null })}
            >
              <option value="">All sites</option>
              {[...new Set([...sites, ...(site ? [site] : [])])].map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          </label>
          <label className="flex items-center gap-1 text-sm" title="Compare the range before and after this time (UTC), e.g. the onset">
            <span className="text-[var(--muted)]">Before/after</span>
            <UtcTimeInput
              testId="at-input"
              label="before/after time (UTC)"
              valueMs={atMs}
              onChange={(at) => void setUrl({ at: at === null ? null : String(at) })}
            />
          </label>
          <ViewControls snapshot={snapshot} {...controls} download={{ view: "rebuilds", at: atMs }} />
        </div>
        <RangeStatus snapshot={snapshot} view="rebuilds" startMs={startMs} endMs={endMs} errors={errors} fallback="the last 24 hours" notices={notices} />
        <p className="text-sm" data-testid="rebuild-profile">
          {profile ? (
            <>
              <span className="font-semibold">Rebuild metrics: {profile.title}.</span>{" "}
              <span className="text-[var(--muted)]">Chosen because {profile.reason}.</span>
            </>
          ) : rate.data ? (
            <span className="text-[var(--muted)]">{rate.data.infos.join(" ")}</span>
          ) : (
            <span className="text-[var(--muted)]">Finding the rebuild metrics…</span>
          )}
        </p>

        <MarkerList markers={markers} onsetSummary={onset?.summary} />
        {sites.length > 0 && (
          <section data-testid="site-multiples" className="grid grid-cols-2 gap-2 md:grid-cols-4 xl:grid-cols-7">
            {sites.map((s) => {
              const series = (rate.data?.data.series ?? []).filter((x) => siteOf(x.labels) === s);
              const values = series.flatMap((x) => x.points.map((p) => p[1])).filter((v): v is number => v !== null);
              const avg = values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
              return (
                <button
                  key={s}
                  type="button"
                  data-site={s}
                  aria-pressed={s === site}
                  onClick={() => void setUrl({ site: s === site ? null : s })}
                  className="rounded border border-[var(--border)] bg-[var(--panel)] p-2 text-left aria-pressed:border-[var(--accent)]"
                >
                  <div className="flex items-baseline justify-between text-xs">
                    <span className="font-semibold">{s}</span>
                    <span className="tabular text-[var(--muted)]">{avg === null ? "—" : `${formatNumber(avg)}/h`}</span>
                  </div>
                  <TimeSeriesChart
                    series={series}
                    unit="rebuilds/h"
                    stacked={false}
                    startMs={startMs}
                    endMs={endMs}
                    height={70}
                    nameOf={() => s}
                    legend={false}
                  />
                </button>
              );
            })}
          </section>
        )}

        <div className="grid grid-cols-1 gap-3 lg:grid-cols-2">
          {REBUILD_CHARTS.map((id) => (
            <RebuildChart key={id} id={id} call={inputs.charts[id]} site={site} siteOf={siteOf} nameOf={nameOf} markers={markers} />
          ))}
        </div>

        <FlapChanges startMs={startMs} endMs={endMs} snapshot={snapshot?.id} />

        <PanelFrame
          id="rebuild-summary"
          chart={false}
          title="This range against the previous one"
          description={`Per site, ${formatRange(startMs, endMs)} against the ${formatRange(calls.summaryBefore.startMs, calls.summaryBefore.endMs)} before it.`}
          state={summary}
        >
          {(data) => (
            <RebuildSummaryTable
              testId="summary-previous"
              left={{ label: "previous", data: summaryBefore.data?.data }}
              right={{ label: "this range", data }}
              siteOf={siteOf}
              selectedSite={site}
            />
          )}
        </PanelFrame>
        {calls.beforeAt && calls.afterAt && atMs !== undefined ? (
          <PanelFrame
            id="rebuild-before-after"
            chart={false}
            title={`Before and after ${formatUtc(atMs)}`}
            description={`Per site, ${formatRange(calls.beforeAt.startMs, calls.beforeAt.endMs)} against ${formatRange(calls.afterAt.startMs, calls.afterAt.endMs)}.`}
            state={afterAt}
          >
            {(data) => (
              <RebuildSummaryTable
                testId="summary-at"
                left={{ label: "before", data: beforeAt.data?.data }}
                right={{ label: "after", data }}
                siteOf={siteOf}
                selectedSite={site}
              />
            )}
          </PanelFrame>
        ) : (
          <p className="flex flex-wrap items-center gap-2 text-xs text-[var(--muted)]">
            {onset && (
              <button
                type="button"
                data-testid="compare-at-onset"
                onClick={() => void setUrl({ at: String(onset.timeMs) })}
                className="rounded border border-[var(--border)] px-2 py-0.5 text-[var(--fg)]"
              >
                Compare before/after the onset, {formatUtc(onset.timeMs, false)}
              </button>
            )}
            <span>{onset ? "or enter" : "Enter"} a time inside the range under Before/after to compare each site before and after it.</span>
          </p>
        )}
      </main>
    </ChartZoomContext>
  );
}

interface ChartProps {
  id: (typeof REBUILD_CHARTS)[number];
  call: PanelQueryInput;
  site?: string;
  siteOf: (labels: Record<string, string>) => string;
  nameOf: (labels: Record<string, string>) => string;
  markers: ChartMarker[];
}

function RebuildChart({ id, call, site, siteOf, nameOf, markers }: ChartProps) {
  const def = findRebuildPanel(id);
  const query = usePanel(call, call.width > 0);
  if (!def) return null;
  // A panel the detected gateway cannot answer (no stages, a summary's quantiles) is one line at the end, saying why.
  if (query.data?.data.nothingToDraw) return <PanelNotShown id={id} title={def.title} reasons={query.data.infos} />;
  const filtered =
    query.data && site
      ? { ...query, data: { ...query.data, data: { ...query.data.data, series: query.data.data.series.filter((s) => siteOf(s.labels) === site) } } }
      : query;
  return (
    <PanelFrame id={id} title={def.title} description={def.description} state={filtered}>
      {(data) => (
        <TimeSeriesChart
          series={data.series}
          unit={data.unit}
          stacked={false}
          startMs={data.startMs}
          endMs={data.endMs}
          markers={markers}
          thresholds={data.thresholds}
          nameOf={nameOf}
        />
      )}
    </PanelFrame>
  );
}
