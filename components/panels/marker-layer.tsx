"use client";
/**
 * Markers (releases, notes, a detected onset) drawn over a time chart or a timeline: a line each with
 * its detail as hover text, and its label beside its own line with its UTC time where there is room.
 */
import { markerAnchor } from "./marker-list";
import { useMemo } from "react";
import { formatUtc } from "@/lib/format/time";
import { LABEL_OFFSET, placeLabels } from "@/lib/markers/label-rows";
import type { Marker } from "@/lib/markers/marker";
import type { ThemeColors } from "./use-theme-colors";

export const CHART_FONT_FAMILY = "system-ui, -apple-system, 'Segoe UI', sans-serif";
const MARKER_FONT_PX = 10;
const MARKER_FONT = `${MARKER_FONT_PX}px ${CHART_FONT_FAMILY}`;
/** Rows of marker labels at the top of the plot, before one must share a row. */
const MARKER_ROWS = 4;
/** Narrower than this, a cut label says nothing; its line's hover text still does. */
const MIN_LABEL_PX = 24;

let measuring: CanvasRenderingContext2D | null = null;

/** How wide a label is drawn in a font, in CSS pixels. */
export function labelWidth(text: string, font = `11px ${CHART_FONT_FAMILY}`): number {
  measuring ??= document.createElement("canvas").getContext("2d");
  if (!measuring) return text.length * 7;
  measuring.font = font;
  return measuring.measureText(text).width;
}

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

interface Props {
  /** the markers inside the range drawn */
  markers: Marker[];
  xOf: (tsMs: number) => number;
  top: number;
  height: number;
  left: number;
  right: number;
  colors: ThemeColors;
}

/** SVG content: put it inside the chart's overlay <svg>. */
export function MarkerLayer({ markers, xOf, top, height, left, right, colors }: Props) {
  // Labels are outlined in the panel's colour so that they stay legible over what is drawn below them.
  const halo = { stroke: colors.panel, strokeWidth: 3, strokeLinejoin: "round" as const, paintOrder: "stroke" };
  const markerColor = (m: Marker) => (m.kind === "onset" ? colors.accent : colors.muted);
  const markerTitle = (m: Marker) => `${formatUtc(m.timeMs)} · ${m.label}\n${m.detail}`;
  const xs = markers.map((m) => xOf(m.timeMs));
  const xsKey = xs.join(",");
  // Placed once per layout, not on every move of the cursor (which draws the chart again).
  const placements = useMemo(
    () =>
      placeLabels(
        markers.map((m, i) => ({ x: xs[i], width: labelWidth(markerText(m), MARKER_FONT) })),
        { left, right },
        MARKER_ROWS,
      ),
    // eslint-disable-next-line react-hooks/exhaustive-deps -- the positions are in xsKey
    [xsKey, left, right, markers],
  );
  return (
    <>
      {markers.map((m, i) => (
        // The line lets the pointer through to the chart: on it, the chart's values show (its label carries the marker's own).
        <g key={`${m.timeMs}-${m.label}`} data-marker={m.label} data-marker-kind={m.kind ?? "release"} className="pointer-events-none">
          <title>{markerTitle(m)}</title>
          <line x1={xs[i]} x2={xs[i]} y1={top} y2={top + height} stroke={markerColor(m)} strokeDasharray={m.kind === "onset" ? "6 2" : "4 3"} />
        </g>
      ))}
      {/* After every line, so that no line crosses a label. */}
      {markers.map((m, i) => {
        const { leftward, row, width: room } = placements[i] ?? { leftward: false, row: 0, width: 0 };
        const text = fittedLabel(m, room);
        if (text === "") return null;
        const label = (
          <text
            key={`${m.timeMs}-${m.label}`}
            data-marker-label={m.label}
            data-marker-x={xs[i].toFixed(1)}
            x={leftward ? xs[i] - LABEL_OFFSET : xs[i] + LABEL_OFFSET}
            y={top + 10 + row * 11}
            textAnchor={leftward ? "end" : "start"}
            fontSize={MARKER_FONT_PX}
            fontFamily={CHART_FONT_FAMILY}
            fill={markerColor(m)}
            {...halo}
            className="pointer-events-auto"
          >
            <title>{markerTitle(m)}</title>
            {text}
          </text>
        );
        // A recorded change's label links to its entry under the page's heading, which opens its diff.
        return m.kind === "change" ? (
          <a key={`${m.timeMs}-${m.label}`} href={`#${markerAnchor(m)}`}>
            {label}
          </a>
        ) : (
          label
        );
      })}
    </>
  );
}
