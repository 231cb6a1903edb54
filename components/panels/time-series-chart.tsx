"use client";
/**
 * A time-series chart (stacked areas or lines) with exact values in the tooltip, a crosshair shared
 * with the page's other charts, drag to zoom, and a legend whose entries show only themselves. The
 * series are drawn on a canvas by uPlot (thousands of points in a few milliseconds, where an SVG
 * chart took half a second for a page); markers and thresholds are a small SVG layer on top, so each
 * keeps its hover text.
 */
import { useEffect, useMemo, useRef, useState, type CSSProperties } from "react";
import uPlot from "uplot";
import "uplot/dist/uPlot.min.css";
import { formatNumber, formatTick, formatValue } from "@/lib/format/number";
import { formatAxisTime, formatUtc, timeTicks } from "@/lib/format/time";
import type { Marker } from "@/lib/markers/marker";
import type { Series } from "@/lib/promql/types";
import { seriesName, stackColumns, toColumns } from "@/lib/panels/series-name";
import { OTHER_LABEL } from "@/lib/panels/top-n";
import { OTHER_COLOR } from "@/lib/panels/series-colors";
import { useChartZoom } from "./chart-zoom";
import { CHART_FONT_FAMILY, labelWidth, MarkerLayer } from "./marker-layer";
import { useElementWidth } from "./use-element-width";
import { useSeriesColors } from "./use-series-colors";
import { useThemeColors } from "./use-theme-colors";

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

const FONT = `11px ${CHART_FONT_FAMILY}`;
const Y_AXIS_WIDTH = 52;
const RIGHT_PADDING = 18;

/** Where the plotting area lies in the chart, in CSS pixels, and the y scale drawn. */
interface PlotBox {
  left: number;
  top: number;
  width: number;
  height: number;
  yMin: number;
  yMax: number;
}

/** Every chart on a page moves its crosshair with the one under the pointer (they share the page's range). */
const CROSSHAIR_SYNC_KEY = "churnscope-page";
/** Narrower than this (a phone), the tooltip goes below the plot, where it can be as wide as the chart. */
const NARROW_CHART_PX = 560;
/** A drag narrower than this is a click, not a zoom. */
const MIN_DRAG_PX = 4;

/** Each series' colour: its name's (`named`, the colours of the series not folded into "other"), and grey for "other". */
function colorsOf(series: Series[], named: string[]): string[] {
  let next = 0;
  return series.map((s) => (s.labels[OTHER_LABEL] !== undefined ? OTHER_COLOR : named[next++]));
}

/**
 * The legend's click: show only this series, or everything again when it is already the only one shown;
 * with Ctrl or ⌘, hide or show this one alone (as in Grafana).
 */
function toggledHidden(hidden: ReadonlySet<string>, names: readonly string[], name: string, alone: boolean): Set<string> {
  const next = new Set(hidden);
  if (!alone) {
    if (next.has(name)) next.delete(name);
    else next.add(name);
    return next.size >= names.length ? new Set() : next;
  }
  const onlyThis = !hidden.has(name) && names.every((n) => n === name || hidden.has(n));
  return onlyThis ? new Set() : new Set(names.filter((n) => n !== name));
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
  const onZoom = useChartZoom();
  const zoomRef = useRef(onZoom);
  zoomRef.current = onZoom;
  const zoomable = onZoom !== undefined;
  const allNames = useMemo(() => series.map((s) => nameOf(s.labels)), [series, nameOf]);
  const namedNames = useMemo(() => allNames.filter((_, i) => series[i].labels[OTHER_LABEL] === undefined), [series, allNames]);
  const namedColors = useSeriesColors(namedNames);
  const allColors = useMemo(() => colorsOf(series, namedColors), [series, namedColors]);
  const means = useMemo(() => series.map(mean), [series]);
  const [hidden, setHidden] = useState<ReadonlySet<string>>(() => new Set());
  const shown = useMemo(() => {
    const all = series.map((s, i) => ({ s, name: allNames[i], index: i }));
    const entries = all.filter((e) => !hidden.has(e.name));
    // A new answer without any of the names still shown shows everything again.
    return entries.length > 0 ? entries : all;
  }, [series, allNames, hidden]);
  const visible = useMemo(() => shown.map((e) => e.s), [shown]);
  const names = useMemo(() => shown.map((e) => e.name), [shown]);
  const shownColors = useMemo(() => shown.map((e) => allColors[e.index]), [shown, allColors]);
  // The plot reads its series' colours at each draw: a name that moves to another colour is drawn again, not rebuilt.
  const colorsRef = useRef(shownColors);
  colorsRef.current = shownColors;
  const plotRef = useRef<{ plot: uPlot; colors: string[] } | null>(null);
  const columns = useMemo(() => toColumns(visible), [visible]);
  const drawn = useMemo(() => (stacked ? stackColumns(columns.ys) : columns.ys), [columns, stacked]);
  const thresholdKey = thresholds.map((t) => t.value).join(",");
  const canvasRef = useRef<HTMLDivElement | null>(null);
  const [box, setBox] = useState<PlotBox | null>(null);
  const [cursor, setCursor] = useState<{ index: number; left: number; top: number } | null>(null);
  // Only the chart under the pointer shows values; the others follow with their crosshair alone.
  const hoveredRef = useRef(false);

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
      cursor: {
        y: false,
        points: { show: false },
        drag: { x: zoomable, y: false, setScale: false },
        // Pointer moves only: a drag zooms the chart it is made on, not every chart at once.
        sync: { key: CROSSHAIR_SYNC_KEY, setSeries: false, filters: { pub: (type) => type === "mousemove" } },
      },
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
        ...visible.map((_, i) => ({
          label: names[i],
          stroke: (_u: uPlot, seriesIdx: number) => colorsRef.current[seriesIdx - 1],
          width: stacked ? 1 : 1.5,
          // Stacked: each area is filled down to the one below it (the bands), the lowest down to zero.
          ...(stacked ? { fill: (_u: uPlot, seriesIdx: number) => `${colorsRef.current[seriesIdx - 1]}8c` } : {}),
          points: { show: false },
        })),
      ],
      bands: stacked ? visible.slice(1).map((_, i) => ({ series: [i + 2, i + 1] as [number, number] })) : undefined,
      hooks: {
        draw: [
          (u) => {
            const px = uPlot.pxRatio;
            setBox({ left: u.bbox.left / px, top: u.bbox.top / px, width: u.bbox.width / px, height: u.bbox.height / px, yMin, yMax });
            target.dataset.drawn = "true";
            // The colours this draw gave its series (the stroke functions read them from the same place), in order.
            target.dataset.colors = colorsRef.current.join(" ");
          },
        ],
        setCursor: [
          (u) => {
            const index = u.cursor.idx;
            const off = index === null || index === undefined || u.cursor.left === undefined || u.cursor.left < 0;
            setCursor(off || !hoveredRef.current ? null : { index, left: u.cursor.left!, top: u.cursor.top ?? 0 });
          },
        ],
        setSelect: [
          (u) => {
            const { left, width: dragged } = u.select;
            if (dragged >= MIN_DRAG_PX) zoomRef.current?.(u.posToVal(left, "x"), u.posToVal(left + dragged, "x"));
            if (dragged > 0) u.setSelect({ left: 0, top: 0, width: 0, height: 0 }, false);
          },
        ],
      },
    };
    const plot = new uPlot(options, [columns.xs, ...drawn] as uPlot.AlignedData, target);
    plotRef.current = { plot, colors: colorsRef.current };
    return () => {
      plotRef.current = null;
      plot.destroy();
      delete target.dataset.drawn;
      delete target.dataset.colors;
    };
  }, [columns, drawn, names, visible, stacked, startMs, endMs, width, height, colors, thresholdKey, zoomable]);
  useEffect(() => {
    const drawnWith = plotRef.current;
    if (!drawnWith || drawnWith.colors === shownColors) return;
    drawnWith.colors = shownColors;
    drawnWith.plot.redraw(true);
  }, [shownColors]);

  const xOf = (tsMs: number) => (box ? box.left + ((tsMs - startMs) / (endMs - startMs)) * box.width : 0);
  const yOf = (value: number) => (box ? box.top + (1 - (value - box.yMin) / (box.yMax - box.yMin)) * box.height : 0);
  const shownMarkers = markers.filter((m) => m.timeMs >= startMs && m.timeMs <= endMs);
  // Labels are outlined in the panel's colour so that they stay legible over the series drawn below them.
  const halo = { stroke: colors.panel, strokeWidth: 3, strokeLinejoin: "round" as const, paintOrder: "stroke" };

  return (
    <div>
      <div
        ref={ref}
        className={`relative w-full ${zoomable ? "cursor-crosshair" : ""}`}
        style={{ height }}
        data-zoomable={zoomable ? "" : undefined}
        onMouseEnter={() => (hoveredRef.current = true)}
        onMouseLeave={() => {
          hoveredRef.current = false;
          setCursor(null);
        }}
      >
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
            <MarkerLayer markers={shownMarkers} xOf={xOf} top={box.top} height={box.height} left={box.left} right={box.left + box.width} colors={colors} />
          </svg>
        )}
        {cursor && box && (
          <ChartTooltip
            tsMs={columns.xs[cursor.index]}
            items={visible.map((_, i) => ({ index: i, name: names[i], color: shownColors[i], value: columns.ys[i][cursor.index] }))}
            unit={unit}
            left={box.left + cursor.left}
            top={box.top + cursor.top}
            chartWidth={width}
            chartHeight={height}
          />
        )}
      </div>
      {legend && (
        <ul className="mt-2 flex flex-wrap gap-x-4 gap-y-1 text-xs" data-testid="legend">
          {series.map((s, i) => {
            const name = allNames[i];
            const avg = means[i];
            const off = !names.includes(name);
            const selectable = onSelectSeries && s.labels[OTHER_LABEL] === undefined && s.labels.resource !== undefined;
            return (
              <li key={i} className="flex items-center gap-1">
                <button
                  type="button"
                  data-legend-entry={name}
                  aria-pressed={!off}
                  className={`flex items-center gap-1.5 rounded hover:underline ${off ? "opacity-45" : ""}`}
                  onClick={(e) => setHidden(toggledHidden(hidden, allNames, name, !(e.ctrlKey || e.metaKey)))}
                  title={`Show only ${name}; click again to show all (Ctrl or ⌘: hide or show just this one)`}
                >
                  <span data-legend-swatch className="inline-block h-2.5 w-2.5 rounded-sm" style={{ background: allColors[i] }} />
                  <span data-legend-text className={name === selectedName ? "font-semibold underline" : off ? "line-through" : ""}>
                    {name}
                  </span>
                  <span data-legend-text className="text-[var(--muted)] tabular">
                    {/* A mean of counts is not a count: shown with its fraction, never rounded to a whole number. */}
                    avg {avg === null ? "no data" : `${formatNumber(avg)} ${unit}`}
                  </span>
                </button>
                {selectable && name !== selectedName && (
                  <button
                    type="button"
                    data-drill={name}
                    className="rounded px-1 font-semibold text-[var(--accent)] hover:bg-[var(--bg)]"
                    onClick={() => onSelectSeries(s.labels)}
                    title={`Drill into ${name}: its verbs, objects and writers`}
                    aria-label={`Drill into ${name}`}
                  >
                    ›
                  </button>
                )}
              </li>
            );
          })}
        </ul>
      )}
    </div>
  );
}

/** A name that wraps after its dots, slashes and separators (a resource's group, a namespace) before anywhere else. */
function breakable(name: string) {
  return name.split(/(?<=[./·])/).map((part, i) => (
    <span key={i}>
      {i > 0 && <wbr />}
      {part}
    </span>
  ));
}

/** The values at the cursor's time, largest first, each exact (not the stacked total); names wrap, never cut. */
function ChartTooltip({
  tsMs,
  items,
  unit,
  left,
  top,
  chartWidth,
  chartHeight,
}: {
  tsMs: number;
  items: { index: number; name: string; color: string; value: number | null }[];
  unit: string;
  left: number;
  top: number;
  chartWidth: number;
  chartHeight: number;
}) {
  const sorted = [...items].sort((a, b) => (b.value ?? -Infinity) - (a.value ?? -Infinity));
  // Beside the cursor, on the side with more room and as wide as it allows; on a chart as narrow as a
  // phone's, below the plot across its whole width, over the legend, where names fit on a line.
  const flip = left > chartWidth / 2;
  const style: CSSProperties =
    chartWidth < NARROW_CHART_PX
      ? { left: 0, right: 0, top: chartHeight + 4 }
      : {
          left: flip ? undefined : left + 12,
          right: flip ? `calc(100% - ${left - 12}px)` : undefined,
          top: Math.max(0, top - 10),
          maxWidth: Math.max(160, (flip ? left : chartWidth - left) - 16),
        };
  return (
    <div
      role="tooltip"
      data-tooltip-time={tsMs}
      className="pointer-events-none absolute z-10 rounded border border-[var(--border)] bg-[var(--panel)] px-2 py-1 text-xs shadow"
      style={style}
    >
      <div className="mb-1 font-semibold tabular">{formatUtc(tsMs)}</div>
      {sorted.map((item) => (
        <div key={item.index} data-series-index={item.index} className="flex items-start gap-2 tabular">
          <span className="mt-1 inline-block h-2 w-2 shrink-0 rounded-sm" style={{ background: item.color }} />
          <span data-tooltip-name className="min-w-0 [overflow-wrap:anywhere]">
            {breakable(item.name)}
          </span>
          <span data-value className="ml-auto shrink-0 pl-3 font-mono">
            {formatValue(item.value, unit)}
          </span>
        </div>
      ))}
    </div>
  );
}
