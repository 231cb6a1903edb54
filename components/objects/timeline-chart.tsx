"use client";
/**
 * An object's timeline drawn on a UTC time axis: the routed-projection band, a lane per most-changed
 * field, and every write of the range counted into its pixel column (a bar per column, split by class),
 * with the page's markers. A click picks the write nearest to it; a drag zooms the page's range.
 */
import { useRef, useState } from "react";
import { MarkerLayer } from "@/components/panels/marker-layer";
import { useThemeColors } from "@/components/panels/use-theme-colors";
import { formatAxisTime, formatUtc, timeTicks } from "@/lib/format/time";
import type { Marker } from "@/lib/markers/marker";
import type { TimelineSegment } from "@/lib/objects/timeline";
import type { ObjectTimelineAnswer } from "@/lib/wire/objects";
import { CLASS_COLORS } from "./object-link";

/** Bottom to top in a write column: what changed routing first, what changed nothing last. */
const CLASS_ORDER = ["routed", "unrouted", "create", "delete", "unknown", "no-op"] as const;
const ROW = 18;
const AXIS = 18;
const MARKER_ROOM = 14;
/** A drag narrower than this is a click. */
const MIN_DRAG_PX = 4;

export const projectionText = (p: Record<string, string> | null | undefined) =>
  p
    ? Object.entries(p)
        .map(([k, v]) => `${k}=${v === "" ? "—" : v.length > 14 ? `${v.slice(0, 12)}…` : v}`)
        .join(" ")
    : "unknown";

/** A lane's field path and count, its start cut to fit the label column (about 5.5 px a character at 10 px). */
function laneLabel(path: string, changes: number, labelWidth: number): string {
  const count = ` ×${changes.toLocaleString("en-US")}`;
  const room = Math.max(8, Math.floor((labelWidth - 8) / 5.5) - count.length);
  return `${path.length > room ? `…${path.slice(-(room - 1))}` : path}${count}`;
}

/** The routed projection's colour: green online, grey offline, blue for another value, the grid's colour when unknown. */
export const bandColor = (p: Record<string, string> | null) =>
  !p ? "var(--grid)" : p.online === "true" ? "#86efac" : p.online === "false" ? "#d1d5db" : "#bfdbfe";

interface Props {
  timeline: ObjectTimelineAnswer;
  width: number;
  /** where the labels end and the plot begins */
  labelWidth: number;
  markers: Marker[];
  selectedMs?: number;
  onPick: (tsMs: number) => void;
  onZoom: (aMs: number, bMs: number) => void;
}

export function TimelineChart({ timeline, width, labelWidth, markers, selectedMs, onPick, onZoom }: Props) {
  const colors = useThemeColors();
  const { startMs, endMs, columns } = timeline;
  const plot = Math.max(100, width - labelWidth);
  const span = endMs - startMs;
  const x = (tsMs: number) => labelWidth + ((tsMs - startMs) / span) * plot;
  const columnWidth = plot / columns;
  const xOfColumn = (i: number) => labelWidth + i * columnWidth;
  const timeOf = (px: number) => startMs + ((px - labelWidth) / plot) * span;
  const lanesTop = MARKER_ROOM + 26;
  const writesTop = lanesTop + timeline.lanes.length * ROW;
  // Echoes and condition clock faults get a row of their own under the writes, where there are any.
  const marksTop = writesTop + ROW;
  const axisTop = marksTop + (timeline.marks.length > 0 ? ROW : 0) + 4;
  const height = axisTop + AXIS;
  const maxN = Math.max(1, ...timeline.ticks.map((t) => t.n));
  // A column's bar grows with the log of its count, so one write still shows beside a thousand.
  const barHeight = (n: number) => 4 + 12 * (Math.log2(1 + n) / Math.log2(1 + maxN));
  const svgRef = useRef<SVGSVGElement | null>(null);
  const [drag, setDrag] = useState<{ from: number; to: number } | null>(null);
  const pxOf = (clientX: number) => {
    const box = svgRef.current!.getBoundingClientRect();
    return Math.min(labelWidth + plot, Math.max(labelWidth, clientX - box.left));
  };

  return (
    <svg
      ref={svgRef}
      width={width}
      height={height}
      className="cursor-crosshair select-none text-xs"
      role="img"
      aria-label={`timeline of ${timeline.total} writes, ${formatUtc(startMs)} to ${formatUtc(endMs)}`}
      onMouseDown={(e) => {
        if (e.button === 0 && e.clientX - svgRef.current!.getBoundingClientRect().left >= labelWidth) setDrag({ from: pxOf(e.clientX), to: pxOf(e.clientX) });
      }}
      onMouseMove={(e) => drag && setDrag({ ...drag, to: pxOf(e.clientX) })}
      onMouseLeave={() => setDrag(null)}
      onMouseUp={(e) => {
        if (!drag) return;
        const to = pxOf(e.clientX);
        setDrag(null);
        if (Math.abs(to - drag.from) >= MIN_DRAG_PX) onZoom(timeOf(drag.from), timeOf(to));
        else onPick(timeOf(to));
      }}
    >
      <line x1={labelWidth} x2={labelWidth + plot} y1={axisTop} y2={axisTop} stroke="var(--border)" />
      {timeTicks(startMs, endMs, Math.max(2, Math.floor(plot / 90))).map((t) => (
        <g key={t} data-axis-tick={t}>
          <line x1={x(t)} x2={x(t)} y1={lanesTop - 4} y2={axisTop + 3} stroke="var(--grid)" />
          <text x={x(t)} y={axisTop + 14} fontSize={10} textAnchor="middle" fill="var(--muted)">
            {formatAxisTime(t, span)}
          </text>
        </g>
      ))}
      <text x={0} y={MARKER_ROOM + 16} fill="var(--fg)" fontSize={11}>
        routed projection
      </text>
      {timeline.segments.map((s: TimelineSegment, i) => (
        <g key={i} data-band={projectionText(s.projection)} data-band-changes={s.changes}>
          <title>{`${formatUtc(s.fromMs)} → ${formatUtc(s.toMs)}\n${projectionText(s.projection)}${s.changes > 1 ? `\n${s.changes} changes within one pixel; the last value is shown` : ""}`}</title>
          <rect
            x={x(s.fromMs)}
            y={MARKER_ROOM + 4}
            width={Math.max(1, x(s.toMs) - x(s.fromMs))}
            height={16}
            fill={bandColor(s.projection)}
            stroke={s.changes > 1 ? "#dc2626" : "none"}
          />
          {x(s.toMs) - x(s.fromMs) > 120 && (
            <text x={x(s.fromMs) + 4} y={MARKER_ROOM + 16} fontSize={10} fill="#111827" pointerEvents="none">
              {projectionText(s.projection)}
            </text>
          )}
        </g>
      ))}
      {timeline.lanes.map((lane, index) => {
        const y = lanesTop + index * ROW;
        const maxLane = Math.max(1, ...lane.ticks.map(([, n]) => n));
        return (
          <g key={lane.path} data-lane={lane.path}>
            <text x={0} y={y + 12} fontSize={10} fill="var(--muted)">
              <title>{lane.path}</title>
              {laneLabel(lane.path, lane.changes, labelWidth)}
            </text>
            <line x1={labelWidth} x2={labelWidth + plot} y1={y + 8} y2={y + 8} stroke="var(--grid)" />
            {lane.ticks.map(([i, n]) => (
              <rect
                key={i}
                x={xOfColumn(i)}
                y={y + 2}
                width={Math.max(1.5, columnWidth)}
                height={12}
                fill="var(--accent)"
                opacity={0.35 + 0.65 * (n / maxLane)}
              />
            ))}
          </g>
        );
      })}
      <text x={0} y={writesTop + 12} fontSize={11} fill="var(--fg)">
        writes ({timeline.total.toLocaleString("en-US")})
      </text>
      {timeline.ticks.map((tick) => {
        let y = writesTop + ROW - 1;
        const total = barHeight(tick.n);
        return (
          <g key={tick.i} data-column={tick.i} data-n={tick.n} data-classes={JSON.stringify(tick.byClass)}>
            <title>
              {`${formatUtc(startMs + (tick.i * span) / columns)} + ${Math.max(1, Math.round(span / columns / 1000))} s: ${tick.n} write${tick.n === 1 ? "" : "s"}\n` +
                CLASS_ORDER.filter((c) => tick.byClass[c])
                  .map((c) => `${tick.byClass[c]} ${c}`)
                  .join(", ")}
            </title>
            {CLASS_ORDER.filter((c) => tick.byClass[c]).map((c) => {
              const h = (total * (tick.byClass[c] ?? 0)) / tick.n;
              y -= h;
              return <rect key={c} x={xOfColumn(tick.i)} y={y} width={Math.max(1.5, columnWidth)} height={h} fill={CLASS_COLORS[c]} />;
            })}
          </g>
        );
      })}
      {timeline.marks.length > 0 && (
        <g data-testid="marks-row">
          <text x={0} y={marksTop + 12} fontSize={10} fill="var(--muted)">
            <title>
              writes the API server answered unchanged (echoes), that moved only conditions&apos; clocks, or that left a condition&apos;s clock wrong
            </title>
            echoes · clocks
          </text>
          {timeline.marks.map((m) => (
            <g key={m.i} data-mark-column={m.i} data-echoes={m.echoes} data-clock-only={m.clockOnly} data-clock-faults={m.clockFaults}>
              <title>
                {[
                  m.echoes && `${m.echoes} echo${m.echoes === 1 ? "" : "es"}`,
                  m.clockOnly && `${m.clockOnly} clock-only`,
                  m.clockFaults && `${m.clockFaults} with a clock fault`,
                ]
                  .filter(Boolean)
                  .join(", ")}
              </title>
              <rect
                x={xOfColumn(m.i)}
                y={marksTop + 3}
                width={Math.max(2, columnWidth)}
                height={12}
                fill={m.clockFaults > 0 ? "#b45309" : m.clockOnly > 0 ? "#f59e0b" : CLASS_COLORS["no-op"]}
              />
            </g>
          ))}
        </g>
      )}
      {selectedMs !== undefined && selectedMs > startMs && selectedMs <= endMs && (
        <line data-testid="picked-line" x1={x(selectedMs)} x2={x(selectedMs)} y1={lanesTop - 4} y2={axisTop} stroke="var(--fg)" strokeWidth={1.5} />
      )}
      <MarkerLayer
        markers={markers.filter((m) => m.timeMs >= startMs && m.timeMs <= endMs)}
        xOf={x}
        top={0}
        height={axisTop}
        left={labelWidth}
        right={labelWidth + plot}
        colors={colors}
      />
      {drag && Math.abs(drag.to - drag.from) >= MIN_DRAG_PX && (
        <rect
          x={Math.min(drag.from, drag.to)}
          y={0}
          width={Math.abs(drag.to - drag.from)}
          height={axisTop}
          fill="var(--accent)"
          opacity={0.12}
          pointerEvents="none"
        />
      )}
    </svg>
  );
}
