"use client";
/**
 * The markers in the range in words, under the page's heading: each one's time, label and detail (a release's
 * notes, a note's author), so nobody has to hover a line to read them. Folded away past a few, the count kept.
 * Then the detected onset in words: what rose, when, and what rose most; and what changed around it (the recorded
 * changes tested against their writers' rates). A recorded change opens to its diff.
 */
import { useEffect, useState } from "react";
import { formatUtc } from "@/lib/format/time";
import type { ChangesAnswer } from "@/lib/wire/changes";
import { ChangesSummary } from "./changes-summary";
import { usePhone } from "./use-phone";
import type { Marker } from "@/lib/markers/marker";

const KIND_WORD: Record<Marker["kind"], string> = { release: "release", note: "note", query: "found by PromQL", change: "recorded change", onset: "detected" };
/** Shown open up to this many (on a phone, COMPACT_UP_TO); more fold behind their count. */
const OPEN_UP_TO = 8;
const COMPACT_UP_TO = 3;

/** On a phone the list starts folded past a few lines; the summaries' first lines stay. */
export function MarkerList({
  markers,
  onsetSummary,
  changes,
}: {
  markers: Marker[];
  onsetSummary?: string;
  /** the Write load page's: what changed around the onset ("loading" until it comes) */
  changes?: ChangesAnswer | "loading";
}) {
  const compact = usePhone();
  const sorted = [...markers].sort((a, b) => a.timeMs - b.timeMs);
  return (
    <>
      {sorted.length > 0 && <Listed sorted={sorted} onsetSaid={onsetSummary !== undefined} openUpTo={compact ? COMPACT_UP_TO : OPEN_UP_TO} />}
      {onsetSummary && <OnsetSummary summary={onsetSummary} compact={compact === true} />}
      {changes && <ChangesSummary answer={changes} />}
    </>
  );
}

/** On a phone, what rose and when on one line, the rest a tap away, so the first chart starts on the first screen. */
function OnsetSummary({ summary, compact }: { summary: string; compact: boolean }) {
  const cut = summary.search(/ \(|\. /);
  const title = <span className="font-semibold text-[var(--accent)]">Detected onset:</span>;
  if (!compact || cut < 0)
    return (
      <p className="text-xs" data-testid="onset-summary">
        {title} {summary}
      </p>
    );
  return (
    <details className="text-xs" data-testid="onset-summary">
      <summary className="cursor-pointer">
        {title} {summary.slice(0, cut)}
      </summary>
      {summary.slice(cut).trim()}
    </details>
  );
}

/** A marker's anchor, which its line on a chart links to. */
export const markerAnchor = (m: Marker) => `marker-${m.kind}-${m.timeMs}`;

/** `onsetSaid`: the onset's detail is the summary under the list, so its entry leaves it out rather than say it twice. */
function Listed({ sorted, onsetSaid, openUpTo }: { sorted: Marker[]; onsetSaid: boolean; openUpTo: number }) {
  const hash = useHash();
  const linked = sorted.some((m) => `#${markerAnchor(m)}` === hash);
  return (
    <details data-testid="marker-list" className="text-xs" open={sorted.length <= openUpTo || linked}>
      <summary className="cursor-pointer select-none text-[var(--muted)]">
        {sorted.length} marker{sorted.length === 1 ? "" : "s"} in this range
      </summary>
      <ul className="mt-1 space-y-0.5">
        {sorted.map((m) => (
          <li key={`${m.timeMs}-${m.kind}-${m.label}`} id={markerAnchor(m)} data-marker-item={m.label} className="flex flex-wrap gap-x-2">
            <span className="font-mono tabular text-[var(--muted)]">{formatUtc(m.timeMs)}</span>
            <span className={m.kind === "onset" ? "font-semibold text-[var(--accent)]" : "font-semibold"}>{m.label}</span>
            <span className="text-[var(--muted)]">({KIND_WORD[m.kind]})</span>
            {m.kind === "change" ? (
              <Diff detail={m.detail} open={`#${markerAnchor(m)}` === hash} />
            ) : (
              !(onsetSaid && m.kind === "onset") && <span className="min-w-0 whitespace-pre-wrap break-words">{m.detail.replace(/\n/g, " ")}</span>
            )}
          </li>
        ))}
      </ul>
    </details>
  );
}

/** A recorded change's detail: where and by whom, then its diff, one field a line, folded until asked for. */
function Diff({ detail, open }: { detail: string; open: boolean }) {
  const [where, ...lines] = detail.split("\n");
  return (
    <details data-testid="change-diff" className="min-w-0 basis-full sm:basis-auto" open={open || undefined}>
      <summary className="cursor-pointer select-none">{where}</summary>
      {lines.length > 0 && <pre className="mt-0.5 overflow-x-auto whitespace-pre-wrap break-all font-mono text-[11px]">{lines.join("\n")}</pre>}
    </details>
  );
}

/** The page's fragment: a chart's change marker links to its entry here (marker-layer.tsx), which then opens. */
function useHash(): string {
  const [hash, setHash] = useState("");
  useEffect(() => {
    const read = () => setHash(window.location.hash);
    read();
    window.addEventListener("hashchange", read);
    return () => window.removeEventListener("hashchange", read);
  }, []);
  return hash;
}
