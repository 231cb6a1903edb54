"use client";
/** The detected onset of a panel's series as a chart marker, with what rose and by how much. */
import { useMemo } from "react";
import { detectOnset } from "@/lib/analysis/onset";
import { formatValue } from "@/lib/format/number";
import { formatUtc } from "@/lib/format/time";
import type { PanelData } from "@/lib/panels/run-panel";
import { OTHER_LABEL } from "@/lib/panels/top-n";
import type { ChartMarker } from "./time-series-chart";

/** Runs detection only when the panel's data changes, not on every render of the page. */
export function useOnsetMarker(data: PanelData | undefined, nameOf: (labels: Record<string, string>) => string, what: string) {
  // nameOf is derived from stable settings (site label); the data alone decides when to detect again.
  // eslint-disable-next-line react-hooks/exhaustive-deps
  return useMemo(() => onsetMarker(data, nameOf, what), [data, what]);
}

export function onsetMarker(
  data: PanelData | undefined,
  nameOf: (labels: Record<string, string>) => string,
  what: string,
): { marker: ChartMarker; summary: string } | null {
  if (!data) return null;
  // Rate windows longer than the step make neighbouring points share data (see OnsetOptions.overlap).
  const windowSeconds = Number(/\[(\d+)s\]/.exec(data.query)?.[1] ?? data.stepSeconds);
  const onset = detectOnset(data.series, { overlap: windowSeconds / data.stepSeconds });
  if (!onset) return null;
  // "other" is many series summed: it names nothing that rose.
  const movers = onset.movers
    .filter((m) => m.labels[OTHER_LABEL] === undefined)
    .map((m) => `${nameOf(m.labels)} ${formatValue(m.before, data.unit)} → ${formatValue(m.after, data.unit)}`)
    .join("; ");
  const summary = `${what} rose from ${formatValue(onset.before, data.unit)} to ${formatValue(onset.after, data.unit)} at ${formatUtc(onset.timeMs)} (the first point at the new level; the change happened within the step before it). Rose most: ${movers || "—"}.`;
  return { marker: { timeMs: onset.timeMs, label: "onset (detected)", detail: summary, kind: "onset" }, summary };
}
