"use client";
/** A time-series chart (stacked areas or lines) with exact values in the tooltip and a clickable legend. */
import { useMemo } from "react";
import { Area, AreaChart, CartesianGrid, Line, LineChart, ReferenceLine, Tooltip, XAxis, YAxis } from "recharts";
import { formatTick, formatValue } from "@/lib/format/number";
import { formatAxisTime, formatUtc, timeTicks } from "@/lib/format/time";
import type { Marker } from "@/lib/markers/marker";
import type { Series } from "@/lib/prometheus/types";
import { seriesName, toChartRows } from "@/lib/panels/series-name";
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

function colorOf(series: Series, index: number): string {
  return series.labels[OTHER_LABEL] !== undefined ? OTHER_COLOR : SERIES_COLORS[index % SERIES_COLORS.length];
}

function mean(series: Series): number | null {
  const values = series.points.map((p) => p[1]).filter((v): v is number => v !== null && Number.isFinite(v));
  return values.length ? values.reduce((a, b) => a + b, 0) / values.length : null;
}

export function TimeSeriesChart({ series, unit, stacked, startMs, endMs, height = 220, onSelectSeries, selectedName, markers = [], thresholds = [], nameOf = seriesName, legend = true }: Props) {
  const [ref, width] = useElementWidth<HTMLDivElement>();
  const colors = useThemeColors();
  const rows = useMemo(() => toChartRows(series), [series]);
  const names = useMemo(() => series.map((s) => nameOf(s.labels)), [series, nameOf]);
  const span = endMs - startMs;
  const Chart = stacked ? AreaChart : LineChart;

  return (
    <div>
      <div ref={ref} className="w-full" style={{ height }}>
        {width > 0 && (
          <Chart width={width} height={height} data={rows} margin={{ top: 6, right: 8, bottom: 0, left: 0 }}>
            <CartesianGrid stroke={colors.grid} vertical={false} />
            <XAxis
              dataKey="tsMs"
              type="number"
              scale="time"
              domain={[startMs, endMs]}
              ticks={timeTicks(startMs, endMs, Math.max(2, Math.floor(width / 90)))}
              tickFormatter={(v: number) => formatAxisTime(v, span)}
              stroke={colors.muted}
              tick={{ fontSize: 11, fill: colors.muted }}
            />
            <YAxis tickFormatter={formatTick} stroke={colors.muted} tick={{ fontSize: 11, fill: colors.muted }} width={52} />
            <Tooltip
              isAnimationActive={false}
              content={({ active, payload, label }) => {
                if (!active || !payload?.length) return null;
                const items = payload
                  .map((p) => ({ key: String(p.dataKey), value: p.value as number | null, color: p.color ?? colors.fg }))
                  .sort((a, b) => (b.value ?? -Infinity) - (a.value ?? -Infinity));
                return (
                  <div className="rounded border border-[var(--border)] bg-[var(--panel)] px-2 py-1 text-xs shadow">
                    <div className="mb-1 font-semibold tabular">{formatUtc(Number(label))}</div>
                    {items.map((item) => (
                      <div key={item.key} className="flex items-center gap-2 tabular">
                        <span className="inline-block h-2 w-2 rounded-sm" style={{ background: item.color }} />
                        <span className="max-w-[22rem] truncate">{names[Number(item.key.slice(1))]}</span>
                        <span className="ml-auto pl-3 font-mono">{formatValue(item.value, unit)}</span>
                      </div>
                    ))}
                  </div>
                );
              }}
            />
            {thresholds.map((t) => (
              <ReferenceLine
                key={`y-${t.value}`}
                y={t.value}
                stroke={colors.muted}
                strokeDasharray="2 2"
                ifOverflow="extendDomain"
                label={{ value: t.label, position: "insideTopRight", fontSize: 10, fill: colors.muted }}
              />
            ))}
            {markers
              .filter((m) => m.timeMs >= startMs && m.timeMs <= endMs)
              .map((m, i) => (
                <ReferenceLine
                  key={`${m.timeMs}-${m.label}`}
                  x={m.timeMs}
                  stroke={m.kind === "onset" ? colors.accent : colors.muted}
                  strokeDasharray={m.kind === "onset" ? "6 2" : "4 3"}
                  ifOverflow="hidden"
                  label={({ viewBox }: { viewBox?: { x?: number; y?: number } }) => {
                    const x = viewBox?.x ?? 0;
                    // Labels near the right edge go left of their line; staggered rows keep close markers readable.
                    const leftward = x > width * 0.7;
                    return (
                      <g data-marker={m.label} data-marker-kind={m.kind ?? "release"}>
                        <title>{`${formatUtc(m.timeMs)} · ${m.label}\n${m.detail}`}</title>
                        <text x={leftward ? x - 3 : x + 3} y={(viewBox?.y ?? 0) + 10 + (i % 3) * 11} textAnchor={leftward ? "end" : "start"} fontSize={10} fill={m.kind === "onset" ? colors.accent : colors.muted}>
                          {m.label}
                        </text>
                      </g>
                    );
                  }}
                />
              ))}
            {series.map((s, i) =>
              stacked ? (
                <Area
                  key={i}
                  dataKey={`s${i}`}
                  stackId="stack"
                  type="linear"
                  stroke={colorOf(s, i)}
                  fill={colorOf(s, i)}
                  fillOpacity={0.55}
                  strokeWidth={1}
                  isAnimationActive={false}
                  dot={false}
                />
              ) : (
                <Line key={i} dataKey={`s${i}`} type="linear" stroke={colorOf(s, i)} strokeWidth={1.5} isAnimationActive={false} dot={false} />
              ),
            )}
          </Chart>
        )}
      </div>
      {legend && (
        <ul className="mt-2 flex flex-wrap gap-x-4 gap-y-1 text-xs" data-testid="legend">
          {series.map((s, i) => {
            const name = names[i];
            const avg = mean(s);
            const content = (
              <>
                <span className="inline-block h-2.5 w-2.5 rounded-sm" style={{ background: colorOf(s, i) }} />
                <span className={name === selectedName ? "font-semibold underline" : ""}>{name}</span>
                <span className="text-[var(--muted)] tabular">avg {formatValue(avg, unit)}</span>
              </>
            );
            const selectable = onSelectSeries && s.labels[OTHER_LABEL] === undefined && s.labels.resource !== undefined;
            return (
              <li key={i}>
                {selectable ? (
                  <button type="button" className="flex items-center gap-1.5 hover:underline" onClick={() => onSelectSeries(s.labels)} title={`Drill into ${name}`}>
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
