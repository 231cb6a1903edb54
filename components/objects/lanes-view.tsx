"use client";
/**
 * Many objects on one time axis: a lane per object of the scope (a kind, a cluster, a namespace) with its
 * routed projection as a band and its transitions (routed writes) as red ticks, in the Objects ranking's
 * order. Only the lanes in view are drawn and fetched (a hundred at a time), so thousands of objects scroll
 * as smoothly as ten. A lane opens its object's timeline; a drag across the axis zooms.
 */
import Link from "next/link";
import { useQueries } from "@tanstack/react-query";
import { parseAsString, parseAsStringLiteral, useQueryStates } from "nuqs";
import { useRef, useState } from "react";
import { MarkerLayer } from "@/components/panels/marker-layer";
import { useElementWidth } from "@/components/panels/use-element-width";
import { useThemeColors } from "@/components/panels/use-theme-colors";
import { RangeStatus } from "@/components/time-range/range-status";
import { useViewRange } from "@/components/time-range/use-view-range";
import { ViewControls } from "@/components/time-range/view-controls";
import { fetchEnvelope } from "@/lib/api/fetch-envelope";
import { formatNumber } from "@/lib/format/number";
import { formatAxisTime, formatUtc, timeTicks } from "@/lib/format/time";
import { MAX_TIMELINE_COLUMNS } from "@/lib/objects/timeline";
import { apiUrl } from "@/lib/query/hooks";
import { useViewMarkers } from "@/components/panels/onset-marker";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";
import { OBJECT_SORTS, type ObjectLane, type ObjectLanesAnswer } from "@/lib/wire/objects";
import { ApiNotices, StoreLoading } from "./api-notices";
import { objectFilterState, timelineHref } from "./object-link";
import { ScopeSelectors, useKnownScope, useLearnedKinds, useSortNotices } from "./scope-selectors";
import { bandColor, projectionText } from "./timeline-chart";

const urlState = { ...objectFilterState, sort: parseAsStringLiteral(OBJECT_SORTS).withDefault("writes"), heartbeats: parseAsString };
const LANE_PX = 20;
const PAGE = 100;
const AXIS_PX = 36;
/** Lanes drawn beyond the visible ones, so a scroll does not show blanks before they draw. */
const OVERSCAN = 10;

export function LanesView({ initialNowMs, snapshot }: { initialNowMs: number; snapshot?: SnapshotInfo }) {
  const [url, setUrl] = useQueryStates(urlState, { history: "push" });
  const { startMs, endMs, errors, controls, onZoom } = useViewRange(initialNowMs, snapshot, url.from, url.to, (from, to) => void setUrl({ from, to }));
  const [ref, width] = useElementWidth<HTMLDivElement>();
  const colors = useThemeColors();
  const labelWidth = width < 640 ? 130 : 300;
  const plot = Math.max(100, width - labelWidth);
  const columns = Math.min(MAX_TIMELINE_COLUMNS, Math.max(1, Math.round(plot)));
  const heartbeats = url.heartbeats === "show" ? "show" : "hide";
  const known = useKnownScope(url);
  const scope = known.scope;
  const notices = [...known.notices, ...useSortNotices()];
  const pageUrl = (page: number) =>
    apiUrl("/api/objects/lanes", {
      ...scope,
      from: startMs,
      to: endMs,
      width: columns,
      sort: url.sort,
      heartbeats,
      page,
      pageSize: PAGE,
      snapshot: snapshot?.id,
    });

  const [scrollTop, setScrollTop] = useState(0);
  const viewHeight = 600;
  const firstShown = Math.max(0, Math.floor(scrollTop / LANE_PX) - OVERSCAN);
  const lastShown = Math.floor((scrollTop + viewHeight) / LANE_PX) + OVERSCAN;
  const pages = [
    ...new Set([
      1,
      ...Array.from({ length: Math.floor(lastShown / PAGE) - Math.floor(firstShown / PAGE) + 1 }, (_, i) => Math.floor(firstShown / PAGE) + 1 + i),
    ]),
  ];
  const answers = useQueries({
    queries: pages.map((page) => ({
      queryKey: ["api", pageUrl(page)],
      queryFn: ({ signal }: { signal: AbortSignal }) => fetchEnvelope<ObjectLanesAnswer>(pageUrl(page), signal),
      enabled: width > 0,
    })),
  });
  const first = answers[0];
  useLearnedKinds(known, first.data?.data.kinds);
  const total = first.data?.data.total;
  const laneAt = (index: number): ObjectLane | undefined => {
    const k = pages.indexOf(Math.floor(index / PAGE) + 1);
    return k < 0 ? undefined : answers[k]?.data?.data.lanes[index % PAGE];
  };
  const markers = useViewMarkers(startMs, endMs, snapshot).markers.filter((m) => m.timeMs >= startMs && m.timeMs <= endMs);
  const span = endMs - startMs;
  const x = (tsMs: number) => ((tsMs - startMs) / span) * plot;
  const [drag, setDrag] = useState<{ from: number; to: number } | null>(null);
  const axisRef = useRef<SVGSVGElement | null>(null);
  const pxOf = (clientX: number) => Math.min(plot, Math.max(0, clientX - axisRef.current!.getBoundingClientRect().left - labelWidth));
  const timeOf = (px: number) => startMs + (px / plot) * span;
  const shownCount = total === undefined ? 0 : Math.min(total, lastShown + 1) - Math.min(total, firstShown);

  return (
    <main className="mx-auto max-w-[1600px] space-y-3 p-3">
      <div className="flex flex-wrap items-center gap-3 text-sm">
        <h1 className="text-lg font-semibold">Object lanes</h1>
        <ScopeSelectors kinds={first.data?.data.kinds ?? []} scope={known.selected} onChange={(next) => void setUrl(next)} />
        <label className="flex items-center gap-1 text-[var(--muted)]">
          sort
          <select
            data-testid="lanes-sort"
            className="rounded border border-[var(--border)] bg-[var(--panel)] px-2 py-1 text-[var(--fg)]"
            value={url.sort}
            onChange={(e) => void setUrl({ sort: e.target.value === "writes" ? null : (e.target.value as (typeof OBJECT_SORTS)[number]) })}
          >
            <option value="writes">by writes</option>
            <option value="wasted">by wasted ratio</option>
            <option value="routed">by transitions (routed)</option>
            <option value="name">by name</option>
          </select>
        </label>
        <Link
          prefetch={false}
          className="text-[var(--accent)] hover:underline"
          href={apiUrl("/objects", { ...scope, from: startMs, to: endMs, snapshot: snapshot?.id })}
        >
          ← Objects
        </Link>
        <ViewControls snapshot={snapshot} {...controls} download={{ view: "objects", ...scope }} />
      </div>
      <RangeStatus snapshot={snapshot} startMs={startMs} endMs={endMs} errors={errors} fallback="the last 6 hours" notices={notices} />
      <ApiNotices error={first.error} answer={first.data} retry={first.refetch} />
      <section
        data-testid="lanes"
        data-state={first.isLoading || width === 0 ? "loading" : first.data ? "ready" : "idle"}
        data-total={total}
        data-written={first.data?.data.written}
        className="rounded-md border border-[var(--border)] bg-[var(--panel)] p-3"
      >
        <p className="mb-2 text-xs text-[var(--muted)]">
          {total === undefined || !first.data
            ? ""
            : `${formatNumber(total, true)} objects: the ${formatNumber(first.data.data.written, true)} written in the range in the Objects ranking's order, then the ${formatNumber(total - first.data.data.written, true)} not written (as they were when it began). `}
          Each lane: what consumers route on (green = online, grey = offline), and a red tick where it changed (a routed write). Click a lane for its timeline;
          drag across the axis to zoom.
          {first.data && first.data.data.heartbeatOnly.objects > 0
            ? ` ${formatNumber(first.data.data.heartbeatOnly.objects, true)} heartbeat-only objects hidden.`
            : ""}
        </p>
        <div ref={ref} className="w-full">
          {first.isLoading && <StoreLoading snapshot={snapshot !== undefined} />}
          {width > 0 && first.data && (
            <>
              <svg
                ref={axisRef}
                width={width}
                height={AXIS_PX}
                className="cursor-crosshair select-none"
                aria-label={`time axis, ${formatUtc(startMs)} to ${formatUtc(endMs)}; drag to zoom`}
                onMouseDown={(e) => setDrag({ from: pxOf(e.clientX), to: pxOf(e.clientX) })}
                onMouseMove={(e) => drag && setDrag({ ...drag, to: pxOf(e.clientX) })}
                onMouseLeave={() => setDrag(null)}
                onMouseUp={(e) => {
                  if (drag && Math.abs(pxOf(e.clientX) - drag.from) >= 4) onZoom(timeOf(drag.from), timeOf(pxOf(e.clientX)));
                  setDrag(null);
                }}
              >
                <g transform={`translate(${labelWidth}, 0)`}>
                  {timeTicks(startMs, endMs, Math.max(2, Math.floor(plot / 90))).map((t) => (
                    <text key={t} data-axis-tick={t} x={x(t)} y={AXIS_PX - 4} fontSize={10} textAnchor="middle" fill="var(--muted)">
                      {formatAxisTime(t, span)}
                    </text>
                  ))}
                  <MarkerLayer markers={markers} xOf={x} top={0} height={AXIS_PX - 14} left={0} right={plot} colors={colors} />
                  {drag && Math.abs(drag.to - drag.from) >= 4 && (
                    <rect x={Math.min(drag.from, drag.to)} y={0} width={Math.abs(drag.to - drag.from)} height={AXIS_PX} fill="var(--accent)" opacity={0.15} />
                  )}
                </g>
              </svg>
              <div
                data-testid="lanes-scroller"
                className="relative overflow-y-auto"
                style={{ height: Math.min(viewHeight, (total ?? 0) * LANE_PX + 2) }}
                onScroll={(e) => setScrollTop(e.currentTarget.scrollTop)}
              >
                <div style={{ height: (total ?? 0) * LANE_PX, position: "relative" }} data-shown={shownCount}>
                  {Array.from({ length: Math.max(0, Math.min(total ?? 0, lastShown + 1) - firstShown) }, (_, k) => firstShown + k).map((index) => (
                    <Lane
                      key={index}
                      index={index}
                      lane={laneAt(index)}
                      width={width}
                      labelWidth={labelWidth}
                      plot={plot}
                      columnPx={plot / columns}
                      x={x}
                      markers={markers.map((m) => m.timeMs)}
                      range={{ startMs, endMs, snapshot: snapshot?.id }}
                    />
                  ))}
                </div>
              </div>
            </>
          )}
        </div>
      </section>
    </main>
  );
}

interface LaneProps {
  index: number;
  lane?: ObjectLane;
  width: number;
  labelWidth: number;
  plot: number;
  /** one pixel column's width */
  columnPx: number;
  x: (tsMs: number) => number;
  markers: number[];
  range: { startMs: number; endMs: number; snapshot?: string };
}

function Lane({ index, lane, width, labelWidth, plot, columnPx, x, markers, range }: LaneProps) {
  const top = index * LANE_PX;
  if (!lane) return <div className="absolute left-0 animate-pulse bg-[var(--grid)]" style={{ top: top + 4, height: LANE_PX - 8, width }} />;
  const href = timelineHref(lane, { from: range.startMs, to: range.endMs, snapshot: range.snapshot });
  return (
    <div
      className="absolute left-0 flex items-center"
      style={{ top, height: LANE_PX, width }}
      data-lane-object={`${lane.cluster}/${lane.kind}/${lane.namespace}/${lane.name}`}
      data-transitions={lane.transitions.reduce((n, [, k]) => n + k, 0)}
    >
      <Link
        prefetch={false}
        href={href}
        className="truncate pr-2 text-xs text-[var(--accent)] hover:underline"
        style={{ width: labelWidth }}
        title={`${lane.namespace ? `${lane.namespace}/` : ""}${lane.name} on ${lane.cluster}: ${lane.writes} writes, ${(lane.wastedRatio * 100).toFixed(1)} % wasted, ${lane.routed} routed`}
      >
        {lane.namespace ? `${lane.namespace}/` : ""}
        {lane.name}
      </Link>
      <Link prefetch={false} href={href} tabIndex={-1} aria-hidden className="block">
        <svg width={plot} height={LANE_PX - 4}>
          {lane.segments.map((s, i) => (
            <rect
              key={i}
              data-segment={projectionText(s.projection)}
              x={x(s.fromMs)}
              y={2}
              width={Math.max(1, x(s.toMs) - x(s.fromMs))}
              height={LANE_PX - 8}
              fill={bandColor(s.projection)}
            >
              <title>{`${formatUtc(s.fromMs)} → ${formatUtc(s.toMs)}: ${projectionText(s.projection)}`}</title>
            </rect>
          ))}
          {markers.map((t) => (
            <line key={t} x1={x(t)} x2={x(t)} y1={0} y2={LANE_PX - 4} stroke="var(--muted)" strokeDasharray="2 2" />
          ))}
          {lane.transitions.map(([i, n]) => (
            <rect key={i} data-transition-column={i} x={i * columnPx} y={0} width={Math.max(2, columnPx)} height={LANE_PX - 4} fill="#dc2626">
              <title>{`${n} routed write${n === 1 ? "" : "s"}`}</title>
            </rect>
          ))}
        </svg>
      </Link>
    </div>
  );
}
