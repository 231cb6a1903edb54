"use client";
/**
 * What changed around the onset: the conclusion first (what the onset follows, or not a release), then each recorded
 * change with what testing it against the rate found, and what each writer that rose ran, folded behind their count.
 */
import { formatUtc } from "@/lib/format/time";
import { objectLabel } from "@/lib/objects/key";
import type { ChangesAnswer } from "@/lib/wire/changes";

/**
 * `answer`: "loading" until it comes. As high as the answer from the first paint (two lines, three on a phone), loading or not, so that the charts below do
 * not move when it comes (a drag begun on one would land elsewhere). The list is a tap away.
 */
export function ChangesSummary({ answer }: { answer: ChangesAnswer | "loading" }) {
  if (answer === "loading" || (answer.changes.length === 0 && answer.writers.length === 0))
    return (
      <div className="min-h-[3rem] sm:min-h-[2rem] text-xs" data-testid="changes-summary" data-state={answer === "loading" ? "loading" : "ready"}>
        <span className="font-semibold">What changed:</span>{" "}
        <span className="text-[var(--muted)]">
          {answer === "loading" ? "testing the recorded changes against the rate…" : "no recorded change in this range, and no recorded writer rose."}
        </span>
      </div>
    );
  const more = answer.total - answer.changes.length;
  const untested = answer.total - answer.tested;
  return (
    <div className="min-h-[3rem] sm:min-h-[2rem] text-xs" data-testid="changes-summary" data-state="ready">
      <p>
        <span className="font-semibold">What changed:</span>{" "}
        {answer.conclusion || `${answer.total} recorded change${answer.total === 1 ? "" : "s"}, no onset in this range.`}
      </p>
      <details>
        <summary className="cursor-pointer select-none text-[var(--muted)]">
          {answer.changes.length} recorded change{answer.changes.length === 1 ? "" : "s"} tested against the rate
          {more > 0 ? ` (of ${answer.total}: ${more - untested} more tested and not listed${untested > 0 ? `, ${untested} not tested` : ""})` : ""}
        </summary>
        <ul className="mt-0.5 space-y-0.5">
          {answer.changes.map((v) => (
            <li key={`${v.change.tsMs}-${v.change.key.name}-${v.change.summary}`} data-change-verdict={v.verdict} className="break-words">
              <span className="font-mono tabular text-[var(--muted)]">{formatUtc(v.change.tsMs)}</span>{" "}
              <span className="font-semibold">{v.change.summary}</span> <span className="text-[var(--muted)]">({objectLabel(v.change.key)})</span>: {v.said}
            </li>
          ))}
        </ul>
        {answer.writers.length > 0 && (
          <ul className="mt-0.5 space-y-0.5" data-testid="rising-writers">
            {answer.writers.map((w) => (
              <li key={w.writer} className="break-words">
                {w.said}
              </li>
            ))}
          </ul>
        )}
      </details>
    </div>
  );
}
