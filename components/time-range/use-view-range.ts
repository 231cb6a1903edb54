"use client";
/**
 * The page's time range from the URL's from/to: resolved against "now" (kept still between
 * refreshes), limited to a snapshot's own ranges, with the picker's callbacks. Refresh moves
 * "now" for a relative range (new query keys fetch once); an absolute range refetches instead.
 */
import { useQueryClient } from "@tanstack/react-query";
import { useState } from "react";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";
import { viewRange } from "@/lib/snapshot/format/view-range";

export function useViewRange(initialNowMs: number, snapshot: SnapshotInfo | undefined, from: string, to: string, setRange: (from: string, to: string) => void) {
  const [nowMs, setNowMs] = useState(initialNowMs);
  const queryClient = useQueryClient();
  const { range, errors, startMs, endMs } = viewRange(from, to, nowMs, snapshot);
  const relative = range.from.kind === "relative" || range.to.kind === "relative";
  return {
    startMs,
    endMs,
    errors,
    controls: {
      from,
      to,
      startMs,
      endMs,
      onChange: (nextFrom: string, nextTo: string) => {
        setNowMs(Date.now());
        setRange(nextFrom, nextTo);
      },
      onRefresh: () => (relative ? setNowMs(Date.now()) : void queryClient.invalidateQueries()),
    },
  };
}
