"use client";
/**
 * What changed around the onset: the conclusion first (what the onset follows, or not a release), then each recorded
 * change with what testing it against the rate found, and what each writer that rose ran. Folded past a few changes.
 */
import { formatUtc } from "@/lib/format/time";
import type { ChangesAnswer } from "@/lib/wire/changes";

const OPEN_UP_TO = 6;

export function ChangesSummary({ answer }: { answer: ChangesAnswer }) {
  if (answer.changes.length === 0 && answer.writers.length === 0) return null;
  const more = answer.total - answer.changes.length;
  const untested = answer.total - answer.tested;
  return (
    <div className="text-xs" data-testid="changes-summary">
      <p>
        <span className="font-semibold">What changed:</span>{" "}
        {answer.conclusion || `${answer.total} recorded change${answer.total === 1 ? "" : "s"}, no onset in this range.`}
      </p>
      <details open={answer.changes.length <= OPEN_UP_TO}>
        <summary className="cursor-pointer select-none text-[var(--muted)]">
          {answer.changes.length} recorded change{answer.changes.length === 1 ? "" : "s"} tested against the rate
          {more > 0 ? ` (of ${answer.total}: ${more - untested} more tested and not listed${untested > 0 ? `, ${untested} not tested` : ""})` : ""}
        </summary>
        <ul className="mt-0.5 space-y-0.5">
          {answer.changes.map((v) => (
            <li key={`${v.change.tsMs}-${v.change.key.name}-${v.change.summary}`} data-change-verdict={v.verdict} className="break-words">
              <span className="font-mono tabular text-[var(--muted)]">{formatUtc(v.change.tsMs)}</span>{" "}
              <span className="font-semibold">{v.change.summary}</span>{" "}
              <span className="text-[var(--muted)]">
                ({v.change.key.kind} {v.change.key.namespace ? `${v.change.key.namespace}/` : ""}
                {v.change.key.name})
              </span>
              : {v.said}
            </li>
          ))}
        </ul>
      </details>
      {answer.writers.length > 0 && (
        <ul className="mt-0.5 space-y-0.5" data-testid="rising-writers">
          {answer.writers.map((w) => (
            <li key={w.writer} className="break-words">
              {w.said}
            </li>
          ))}
        </ul>
      )}
    </div>
  );
}
