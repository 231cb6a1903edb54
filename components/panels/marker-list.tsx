"use client";
/**
 * The markers in the range in words, under the page's heading: each one's time, label and detail (a release's
 * notes, a note's author), so nobody has to hover a line to read them. Folded away past a few, the count kept.
 * Then the detected onset in words: what rose, when, and what rose most.
 */
import { formatUtc } from "@/lib/format/time";
import type { Marker } from "@/lib/markers/marker";

const KIND_WORD: Record<Marker["kind"], string> = { release: "release", note: "note", query: "found by PromQL", change: "recorded change", onset: "detected" };
/** Shown open up to this many; more fold behind their count. */
const OPEN_UP_TO = 8;

export function MarkerList({ markers, onsetSummary }: { markers: Marker[]; onsetSummary?: string }) {
  const sorted = [...markers].sort((a, b) => a.timeMs - b.timeMs);
  return (
    <>
      {sorted.length > 0 && <Listed sorted={sorted} onsetSaid={onsetSummary !== undefined} />}
      {onsetSummary && (
        <p className="text-xs" data-testid="onset-summary">
          <span className="font-semibold text-[var(--accent)]">Detected onset:</span> {onsetSummary}
        </p>
      )}
    </>
  );
}

/** `onsetSaid`: the onset's detail is the summary under the list, so its entry leaves it out rather than say it twice. */
function Listed({ sorted, onsetSaid }: { sorted: Marker[]; onsetSaid: boolean }) {
  return (
    <details data-testid="marker-list" className="text-xs" open={sorted.length <= OPEN_UP_TO}>
      <summary className="cursor-pointer select-none text-[var(--muted)]">
        {sorted.length} marker{sorted.length === 1 ? "" : "s"} in this range
      </summary>
      <ul className="mt-1 space-y-0.5">
        {sorted.map((m) => (
          <li key={`${m.timeMs}-${m.kind}-${m.label}`} data-marker-item={m.label} className="flex flex-wrap gap-x-2">
            <span className="font-mono tabular text-[var(--muted)]">{formatUtc(m.timeMs)}</span>
            <span className={m.kind === "onset" ? "font-semibold text-[var(--accent)]" : "font-semibold"}>{m.label}</span>
            <span className="text-[var(--muted)]">({KIND_WORD[m.kind]})</span>
            {!(onsetSaid && m.kind === "onset") && <span className="min-w-0 whitespace-pre-wrap break-words">{m.detail.replace(/\n/g, " ")}</span>}
          </li>
        ))}
      </ul>
    </details>
  );
}
