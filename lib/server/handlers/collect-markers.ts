/**
 * Every marker for a range, in one answer: releases from the configuration, changes found by the
 * configured PromQL, changes the recorder recorded, and notes. A snapshot answers with the markers frozen into it.
 */
import type { ServerContext } from "../context";
import type { Marker } from "../../markers/marker";
import { noteMarker } from "../../store/notes";
import { runMarkerQueries } from "../../markers/query-markers";
import { changeMarker } from "../../markers/change-markers";

import type { WriteStore } from "../../store/store";

/** Recorded changes drawn per range. */
const MAX_CHANGE_MARKERS = 200;

export async function collectMarkers(
  ctx: ServerContext,
  range: { startMs: number; endMs: number },
  signal?: AbortSignal,
): Promise<{ markers: Marker[]; warnings: string[] }> {
  const inRange = (m: Marker) => m.timeMs >= range.startMs && m.timeMs <= range.endMs;
  const found =
    ctx.prometheus && ctx.config.markerQueries.length
      ? await runMarkerQueries(ctx.prometheus.client, ctx.config.markerQueries, range, ctx.prometheus.scrapeIntervalSeconds, signal)
      : { markers: [], warnings: [] };
  const notes = (await ctx.notesStore.get().between(range.startMs, range.endMs)).map(noteMarker);
  const recorded = await changeMarkers(ctx.stores.liveStore(), range);
  const markers = [...ctx.config.markers.filter(inRange), ...found.markers, ...recorded.markers, ...notes].sort((a, b) => a.timeMs - b.timeMs);
  return { markers, warnings: [...found.warnings, ...recorded.warnings] };
}

/** A store's recorded changes in the range as markers: a rollout storm draws its first ones and says how many more there are. */
export async function changeMarkers(store: WriteStore, range: { startMs: number; endMs: number }): Promise<{ markers: Marker[]; warnings: string[] }> {
  const { changes, total } = await store.changesBetween(range.startMs, range.endMs, MAX_CHANGE_MARKERS);
  const warnings =
    total > changes.length ? [`${total} recorded changes in this range; the first ${changes.length} are drawn: narrow the range for the rest.`] : [];
  return { markers: changes.map(changeMarker), warnings };
}
