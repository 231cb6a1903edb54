"use client";
/**
 * The page's time range from the URL's from/to: resolved against "now" (kept still between
 * refreshes), limited to a snapshot's own ranges and zooms inside them, with the picker's and the
 * charts' callbacks. Refresh moves "now" for a relative range (new query keys fetch once); an
 * absolute range refetches instead. A zoom is a new history entry, so Back undoes it.
 */
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";
import { holdingRange, viewRange } from "@/lib/snapshot/format/view-range";
import { zoomOut, zoomTo } from "@/lib/time/zoom";

export function useViewRange(initialNowMs: number, snapshot: SnapshotInfo | undefined, from: string, to: string, setRange: (from: string, to: string) => void) {
  const [nowMs, setNowMs] = useState(initialNowMs);
  const queryClient = useQueryClient();
  const { range, errors, startMs, endMs } = viewRange(from, to, nowMs, snapshot);
  const relative = range.from.kind === "relative" || range.to.kind === "relative";
  // A snapshot zooms only inside the held range on screen.
  const bounds = snapshot ? holdingRange(snapshot.ranges, { startMs, endMs }) : undefined;
  const onChange = (nextFrom: string, nextTo: string) => {
    setNowMs(Date.now());
    setRange(nextFrom, nextTo);
  };
  const show = (r: { startMs: number; endMs: number }) => onChange(String(r.startMs), String(r.endMs));
  const zoomed = bounds !== undefined && (bounds.startMs !== startMs || bounds.endMs !== endMs);
  return {
    startMs,
    endMs,
    errors,
    onZoom: (aMs: number, bMs: number) => show(zoomTo(aMs, bMs, bounds)),
    controls: {
      from,
      to,
      startMs,
      endMs,
      onChange,
      onRefresh: () => (relative ? setNowMs(Date.now()) : void queryClient.invalidateQueries()),
      // Live, always (twice the range, never past now); in a snapshot, while zoomed inside a held range.
      onZoomOut: !snapshot || zoomed ? () => show(zoomOut({ startMs, endMs }, bounds, snapshot ? undefined : Date.now())) : undefined,
    },
  };
}
