"use client";
import { useMemo, useSyncExternalStore } from "react";
import { seriesColors } from "@/lib/panels/series-colors";

/**
 * The colours of one chart's (or table's) series names, drawn again when a name moves to another colour because
 * another chart drew it beside a name that shares its colour: a name shows one colour on every chart of the tab.
 */
export function useSeriesColors(names: readonly string[]): string[] {
  const now = useSyncExternalStore(seriesColors.subscribe, seriesColors.snapshot, seriesColors.snapshot);
  return useMemo(() => now.colorsOf(names), [names, now]);
}
