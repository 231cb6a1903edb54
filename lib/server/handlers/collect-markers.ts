/**
 * Every marker for a range, in one answer: releases from the configuration, changes found by the
 * configured PromQL, changes the recorder recorded, and notes. A snapshot answers with the markers frozen into it.
 */
import type { ServerContext } from "../context";
import type { Marker } from "../../markers/marker";
import { noteMarker } from "../../store/notes";
import { runMarkerQueries } from "../../markers/query-markers";
import { changeMarker } from "../../markers/change-markers";

/** Recorded changes drawn per range: a rollout storm draws its first ones and says how many more there are. */
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
  const recorded = await ctx.stores.liveStore().changesBetween(range.startMs, range.endMs, MAX_CHANGE_MARKERS);
  const warnings =
    recorded.total > recorded.changes.length
      ? [...found.warnings, `${recorded.total} recorded changes in this range; the first ${recorded.changes.length} are drawn: narrow the range for the rest.`]
      : found.warnings;
  const markers = [...ctx.config.markers.filter(inRange), ...found.markers, ...recorded.changes.map(changeMarker), ...notes].sort(
    (a, b) => a.timeMs - b.timeMs,
  );
  return { markers, warnings };
}
