"use client";
/**
 * The one onset every page marks: asked of /api/onset for the view's range (a narrow zoom asks about the two hours
 * around it, so zooming onto the onset keeps its marker), drawn with the page's other markers.
 */
import { formatValue } from "@/lib/format/number";
import { formatUtc } from "@/lib/format/time";
import type { Marker } from "@/lib/markers/marker";
import { OTHER_LABEL } from "@/lib/panels/top-n";
import { seriesName } from "@/lib/panels/series-name";
import { apiUrl, useApi, useMarkers } from "@/lib/query/hooks";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";
import { holdingRange } from "@/lib/snapshot/format/view-range";
import type { OnsetAnswer } from "@/lib/wire/onset";

/** A zoom narrower than this asks about this much around it: a rise needs a stretch either side to be seen. */
const CONTEXT_MS = 2 * 3_600_000;

export interface PageOnset {
  timeMs: number;
  marker: Marker;
  /** one sentence: what rose, from and to, when it began and how finely that was read */
  summary: string;
}

/** The range asked about for a view: the view, or the two hours around a narrower one (inside a snapshot's held range). */
export function onsetContext(startMs: number, endMs: number, snapshot?: SnapshotInfo): { startMs: number; endMs: number } {
  if (endMs - startMs >= CONTEXT_MS) return { startMs, endMs };
  const middleMs = (startMs + endMs) / 2;
  const wide = { startMs: Math.round(middleMs - CONTEXT_MS / 2), endMs: Math.round(middleMs + CONTEXT_MS / 2) };
  const held = snapshot ? holdingRange(snapshot.ranges, { startMs, endMs }) : undefined;
  return held ? { startMs: Math.max(held.startMs, wide.startMs), endMs: Math.min(held.endMs, wide.endMs) } : wide;
}

export function onsetOf(answer: OnsetAnswer): PageOnset {
  // "other" is many series summed: it names nothing that rose.
  const movers = answer.movers
    .filter((m) => m.labels[OTHER_LABEL] === undefined)
    .map((m) => `${seriesName(m.labels)} ${formatValue(m.before, answer.unit)} → ${formatValue(m.after, answer.unit)}`)
    .join("; ");
  const summary =
    `The write rate rose from ${formatValue(answer.before, answer.unit)} to ${formatValue(answer.after, answer.unit)}; ` +
    `the rise began at ${formatUtc(answer.timeMs)} (read at ${answer.stepSeconds} s steps over a ${answer.windowSeconds} s rate window, to the nearest minute). ` +
    `Rose most: ${movers || "—"}.`;
  return { timeMs: answer.timeMs, summary, marker: { timeMs: answer.timeMs, label: "onset (detected)", detail: summary, kind: "onset" } };
}

/**
 * The onset when it falls inside the view, else null (also while it is asked for). `resource`: the one the page
 * draws on its own, so it can be named among what rose most.
 */
export function useOnset(startMs: number, endMs: number, snapshot?: SnapshotInfo, resource?: string): PageOnset | null {
  const context = onsetContext(startMs, endMs, snapshot);
  const answer = useApi<OnsetAnswer | null>(apiUrl("/api/onset", { from: context.startMs, to: context.endMs, resource, snapshot: snapshot?.id })).data?.data;
  return answer && answer.timeMs >= startMs && answer.timeMs <= endMs ? onsetOf(answer) : null;
}

/** A page's markers (releases, changes, notes, or the snapshot's own) with the onset among them. */
export function useViewMarkers(startMs: number, endMs: number, snapshot?: SnapshotInfo, resource?: string): { markers: Marker[]; onset: PageOnset | null } {
  const markers = useMarkers(startMs, endMs, snapshot?.id).data?.data ?? [];
  const onset = useOnset(startMs, endMs, snapshot, resource);
  return { markers: onset ? [...markers, onset.marker] : markers, onset };
}
