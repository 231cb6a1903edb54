/**
 * Every marker for a range, in one answer: releases from the configuration, changes found by the
 * configured PromQL, and notes. A snapshot answers with the markers frozen into it.
 */
import type { ServerContext } from "../context";
import type { Marker } from "../../markers/marker";
import { noteMarker } from "../../store/notes";
import { runMarkerQueries } from "../../markers/query-markers";

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
  const markers = [...ctx.config.markers.filter(inRange), ...found.markers, ...notes].sort((a, b) => a.timeMs - b.timeMs);
  return { markers, warnings: found.warnings };
}
