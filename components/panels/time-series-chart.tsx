"use client";
/**
 * A time-series chart (stacked areas or lines) with exact values in the tooltip and a clickable
 * legend. The series are drawn on a canvas by uPlot (thousands of points in a few milliseconds,
 * where an SVG chart took half a second for a page); markers and thresholds are a small SVG layer
 * on top, so each keeps its hover text.
 */
import { useEffect, useMemo, useRef, useState } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { formatNumber, formatTick, formatValue } from "@/lib/format/number";
import { formatAxisTime, formatUtc, timeTicks } from "@/lib/format/time";
import { LABEL_OFFSET, placeLabels } from "@/lib/markers/label-rows";
import type { Marker } from "@/lib/markers/marker";
import type { Series } from "@/lib/promql/types";
import { seriesName, stackColumns, toColumns } from "@/lib/panels/series-name";
import { OTHER_LABEL } from "@/lib/panels/top-n";
import { useElementWidth } from "./use-element-width";
import { OTHER_COLOR, SERIES_COLORS, useThemeColors } from "./use-theme-colors";

/** Releases, notes and PromQL-found changes; "onset" (found by change-point detection) is drawn in the accent colour. */
export type ChartMarker = Marker;

interface Props {
  series: Series[];
  unit: string;
  stacked: boolean;
  startMs: number;
  endMs: number;
  height?: number;
  /** Legend entries become buttons when set (e.g. drill into a resource). */
  onSelectSeries?: (labels: Record<string, string>) => void;
  selectedName?: string;
  /** Vertical lines for releases and notes; the label's tooltip carries the detail. */
  markers?: ChartMarker[];
  /** horizontal lines, e.g. 1.0 = saturated */
  thresholds?: { value: number; label: string }[];
  /** legend names; defaults to the write-load naming */
  nameOf?: (labels: Record<string, string>) => string;
  /** small multiples leave the legend out */
  legend?: boolean;
}

const FONT_FAMILY = "system-ui, -apple-system, 'Segoe UI', sans-serif";
const FONT = `11px ${FONT_FAMILY}`;
const MARKER_FONT_PX = 10;
/** Rows of marker labels at the top of the plot, before one must share a row. */
const MARKER_ROWS = 4;
const Y_AXIS_WIDTH = 52;
const RIGHT_PADDING = 18;

let measuring: CanvasRenderingContext2D | null = null;

/** How wide a label is drawn in the axis font (or another), in CSS pixels. */
function labelWidth(text: string, font = FONT): number {
  measuring ??= document.createElement("canvas").getContext("2d");
  if (!measuring) return text.length * 7;
  measuring.font = font;
  return measuring.measureText(text).width;
}

const MARKER_FONT = `${MARKER_FONT_PX}px ${FONT_FAMILY}`;
/** Narrower than this, a cut label says nothing; its line's hover text still does. */
const MIN_LABEL_PX = 24;

/** A marker's label with its time (UTC), as drawn where there is room. */
const markerText = (m: { timeMs: number; label: string }) => `${m.label} ${formatUtc(m.timeMs, false).slice(11)}`;

/** The longest of the label with its time, the label, or the label cut with an ellipsis, that fits `width`. */
function fittedLabel(m: { timeMs: number; label: string }, width: number): string {
  for (const text of [markerText(m), m.label]) if (labelWidth(text, MARKER_FONT) <= width + 0.5) return text;
  if (width < MIN_LABEL_PX) return "";
  let cut = m.label.length;
  while (cut > 1 && labelWidth(`${m.label.slice(0, cut)}…`, MARKER_FONT) > width) cut--;
  return `${m.label.slice(0, cut)}…`;
}

/** Where the plotting area lies in the chart, in CSS pixels, and the y scale drawn. */
interface PlotBox {
  left: number;
  top: number;
  width: number;
  height: number;
  yMin: number;
  yMax: number;
}

function colorOf(series: Series, index: number): string {
  return series.labels[OTHER_LABEL] !== undefined ? OTHER_COLOR : SERIES_COLORS[index % SERIES_COLORS.length];
}

function mean(series: Series): number | null {
  const values = series.points.map((p) => p[1]).filter((v): v is number => v !== null && Number.isFinite(v));
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
}

/** The y range: from zero (or the lowest value) to the highest value or threshold, so a threshold line is always in view. */
function yRange(columns: (number | null)[][], thresholds: number[]): [number, number] {
  let min = 0;
  let max = Math.max(0, ...thresholds);
  for (const column of columns)
    for (const v of column)
      if (v !== null && Number.isFinite(v)) {
        if (v < min) min = v;
        if (v > max) max = v;
      }
  if (max === min) max = min + 1;
  return [min, max + (max - min) * 0.05];
}

export function TimeSeriesChart({
  series,
  unit,
  stacked,
  startMs,
  endMs,
  height = 220,
  onSelectSeries,
  selectedName,
  markers = [],
  thresholds = [],
  nameOf = seriesName,
  legend = true,
}: Props) {
  const [ref, width] = useElementWidth<HTMLDivElement>();
  const colors = useThemeColors();
  const columns = useMemo(() => toColumns(series), [series]);
  const drawn = useMemo(() => (stacked ? stackColumns(columns.ys) : columns.ys), [columns, stacked]);
  const names = useMemo(() => series.map((s) => nameOf(s.labels)), [series, nameOf]);
  const thresholdKey = thresholds.map((t) => t.value).join(",");
  const canvasRef = useRef<HTMLDivElement | null>(null);
  const [box, setBox] = useState<PlotBox | null>(null);
  const [cursor, setCursor] = useState<{ index: number; left: number; top: number } | null>(null);

  useEffect(() => {
    const target = canvasRef.current;
    if (!target || width <= 0) return;
    const span = endMs - startMs;
    const [yMin, yMax] = yRange(drawn, thresholdKey ? thresholdKey.split(",").map(Number) : []);
    const axis = { stroke: colors.muted, font: FONT, ticks: { show: false }, grid: { stroke: colors.grid, width: 1 } };
    // A time label is centred on its tick; one too close to the right edge to fit (often the range's
    // end, which the page states anyway) is left out rather than cut.
    const plotWidth = width - Y_AXIS_WIDTH - RIGHT_PADDING;
    const fitsBeforeEdge = (tsMs: number) => ((endMs - tsMs) / span) * plotWidth + RIGHT_PADDING >= labelWidth(formatAxisTime(tsMs, span)) / 2;
    const options: uPlot.Options = {
      width,
      height,
      padding: [6, RIGHT_PADDING, 0, 0],
      legend: { show: false },
      cursor: { y: false, points: { show: false }, drag: { x: false, y: false } },
      scales: { x: { time: false, range: [startMs, endMs] }, y: { range: [yMin, yMax] } },
      axes: [
        {
          ...axis,
          grid: { show: false },
          size: 24,
          splits: () => timeTicks(startMs, endMs, Math.max(2, Math.floor(width / 90))).filter(fitsBeforeEdge),
          values: (_u, ticks) => ticks.map((v) => formatAxisTime(v, span)),
        },
        { ...axis, size: Y_AXIS_WIDTH, values: (_u, ticks) => ticks.map(formatTick) },
      ],
      series: [
        {},
        ...series.map((s, i) => ({
          label: names[i],
          stroke: colorOf(s, i),
          width: stacked ? 1 : 1.5,
          // Stacked: each area is filled down to the one below it (the bands), the lowest down to zero.
          ...(stacked ? { fill: `${colorOf(s, i)}8c` } : {}),
          points: { show: false },
        })),
      ],
      bands: stacked ? series.slice(1).map((_, i) => ({ series: [i + 2, i + 1] as [number, number] })) : undefined,
      hooks: {
        draw: [
          (u) => {
            const px = uPlot.pxRatio;
            setBox({ left: u.bbox.left / px, top: u.bbox.top / px, width: u.bbox.width / px, height: u.bbox.height / px, yMin, yMax });
            target.dataset.drawn = "true";
          },
        ],
        setCursor: [
          (u) => {
            const index = u.cursor.idx;
            setCursor(
              index === null || index === undefined || u.cursor.left === undefined || u.cursor.left < 0
                ? null
                : { index, left: u.cursor.left, top: u.cursor.top ?? 0 },
            );
          },
        ],
      },
    };
    const plot = new uPlot(options, [columns.xs, ...drawn] as uPlot.AlignedData, target);
    return () => {
      plot.destroy();
      delete target.dataset.drawn;
    };
  }, [columns, drawn, names, series, stacked, startMs, endMs, width, height, colors, thresholdKey]);

  const xOf = (tsMs: number) => (box ? box.left + ((tsMs - startMs) / (endMs - startMs)) * box.width : 0);
  const yOf = (value: number) => (box ? box.top + (1 - (value - box.yMin) / (box.yMax - box.yMin)) * box.height : 0);
  const shownMarkers = markers.filter((m) => m.timeMs >= startMs && m.timeMs <= endMs);
  // Labels are outlined in the panel's colour so that they stay legible over the series drawn below them.
  const halo = { stroke: colors.panel, strokeWidth: 3, strokeLinejoin: "round" as const, paintOrder: "stroke" };
  const markerColor = (m: ChartMarker) => (m.kind === "onset" ? colors.accent : colors.muted);
  const markerTitle = (m: ChartMarker) => `${formatUtc(m.timeMs)} · ${m.label}\n${m.detail}`;
  // Placed once per layout, not on every move of the cursor (which draws this component again).
  const placements = useMemo(
    () =>
      box
        ? placeLabels(
            shownMarkers.map((m) => ({ x: xOf(m.timeMs), width: labelWidth(markerText(m), MARKER_FONT) })),
            { left: box.left, right: box.left + box.width },
            MARKER_ROWS,
          )
        : [],
    // eslint-disable-next-line react-hooks/exhaustive-deps -- xOf follows from box and the range
    [box, width, startMs, endMs, markers],
  );

  return (
    <div>
      <div ref={ref} className="relative w-full" style={{ height }}>
        <div ref={canvasRef} data-chart className="absolute inset-0" />
        {box && (
          <svg
            data-chart-overlay
            width={width}
            height={height}
            className="pointer-events-none absolute inset-0"
            aria-hidden={shownMarkers.length === 0 && thresholds.length === 0}
          >
            {thresholds.map((t) => (
              <g key={`y-${t.value}`}>
                <line x1={box.left} x2={box.left + box.width} y1={yOf(t.value)} y2={yOf(t.value)} stroke={colors.muted} strokeDasharray="2 2" />
                <text x={box.left + box.width - 3} y={yOf(t.value) - 3} textAnchor="end" fontSize={10} fill={colors.muted} {...halo}>
                  {t.label}
                </text>
              </g>
            ))}
            {shownMarkers.map((m) => {
              const x = xOf(m.timeMs);
              return (
                <g key={`${m.timeMs}-${m.label}`} data-marker={m.label} data-marker-kind={m.kind ?? "release"} className="pointer-events-auto">
                  <title>{markerTitle(m)}</title>
                  <line x1={x} x2={x} y1={box.top} y2={box.top + box.height} stroke={markerColor(m)} strokeDasharray={m.kind === "onset" ? "6 2" : "4 3"} />
                </g>
              );
            })}
            {/* After every line, so that no line crosses a label. */}
            {shownMarkers.map((m, i) => {
              const x = xOf(m.timeMs);
              const { leftward, row, width: room } = placements[i] ?? { leftward: false, row: 0, width: 0 };
              const text = fittedLabel(m, room);
              if (text === "") return null;
              return (
                <text
                  key={`${m.timeMs}-${m.label}`}
                  data-marker-label={m.label}
                  data-marker-x={x.toFixed(1)}
                  x={leftward ? x - LABEL_OFFSET : x + LABEL_OFFSET}
                  y={box.top + 10 + row * 11}
                  textAnchor={leftward ? "end" : "start"}
                  fontSize={MARKER_FONT_PX}
                  fontFamily={FONT_FAMILY}
                  fill={markerColor(m)}
                  {...halo}
                  className="pointer-events-auto"
                >
                  <title>{markerTitle(m)}</title>
                  {text}
                </text>
              );
            })}
          </svg>
        )}
        {cursor && box && (
          <ChartTooltip
            tsMs={columns.xs[cursor.index]}
            items={series.map((s, i) => ({ index: i, name: names[i], color: colorOf(s, i), value: columns.ys[i][cursor.index] }))}
            unit={unit}
            left={box.left + cursor.left}
            top={box.top + cursor.top}
            flip={box.left + cursor.left > width * 0.6}
          />
        )}
      </div>
      {legend && (
        <ul className="mt-2 flex flex-wrap gap-x-4 gap-y-1 text-xs" data-testid="legend">
          {series.map((s, i) => {
            const name = names[i];
            const avg = mean(s);
            const content = (
              <>
                <span data-legend-swatch className="inline-block h-2.5 w-2.5 rounded-sm" style={{ background: colorOf(s, i) }} />
                <span data-legend-text className={name === selectedName ? "font-semibold underline" : ""}>
                  {name}
                </span>
                <span data-legend-text className="text-[var(--muted)] tabular">
                  {/* A mean of counts is not a count: shown with its fraction, never rounded to a whole number. */}
                  avg {avg === null ? "no data" : `${formatNumber(avg)} ${unit}`}
                </span>
              </>
            );
            const selectable = onSelectSeries && s.labels[OTHER_LABEL] === undefined && s.labels.resource !== undefined;
            return (
              <li key={i}>
                {selectable ? (
                  <button
                    type="button"
                    className="flex items-center gap-1.5 hover:underline"
                    onClick={() => onSelectSeries(s.labels)}
                    title={`Drill into ${name}`}
                  >
                    {content}
                  </button>
                ) : (
                  <span className="flex items-center gap-1.5">{content}</span>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

/** The values at the cursor's time, largest first, each exact (not the stacked total). */
function ChartTooltip({
  tsMs,
  items,
  unit,
  left,
  top,
  flip,
}: {
  tsMs: number;
  items: { index: number; name: string; color: string; value: number | null }[];
  unit: string;
  left: number;
  top: number;
  flip: boolean;
}) {
  const sorted = [...items].sort((a, b) => (b.value ?? -Infinity) - (a.value ?? -Infinity));
  return (
    <div
      role="tooltip"
      data-tooltip-time={tsMs}
      className="pointer-events-none absolute z-10 rounded border border-[var(--border)] bg-[var(--panel)] px-2 py-1 text-xs shadow"
      style={{ left: flip ? undefined : left + 12, right: flip ? `calc(100% - ${left - 12}px)` : undefined, top: Math.max(0, top - 10) }}
    >
      <div className="mb-1 font-semibold tabular">{formatUtc(tsMs)}</div>
      {sorted.map((item) => (
        <div key={item.index} data-series-index={item.index} className="flex items-center gap-2 tabular">
          <span className="inline-block h-2 w-2 rounded-sm" style={{ background: item.color }} />
          <span className="max-w-[22rem] truncate">{item.name}</span>
          <span data-value className="ml-auto pl-3 font-mono">
            {formatValue(item.value, unit)}
          </span>
        </div>
      ))}
    </div>
  );
}
