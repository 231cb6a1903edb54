"use client";
/** The picked write: when, by whom, through which request, whether it changed anything the profile keeps, and its field diff. */
import type { WriteTraits } from "@/lib/churn/conditions";
import { NOOP_EVIDENCE_TEXT } from "@/lib/churn/preconditions";
import { formatUtc } from "@/lib/format/time";
import type { PickedWriteAnswer, PickOnly } from "@/lib/wire/objects";
import { CLASS_COLORS } from "./object-link";
import { projectionText } from "./timeline-chart";

const valueText = (v: unknown) => (v === undefined ? "(absent)" : typeof v === "string" ? v : JSON.stringify(v));

/** What the write did to what the profile keeps, in one sentence, and yes / no / cannot say. */
/** What the write's versions said beyond its class, one line each. */
function traitLines(traits: WriteTraits | undefined): string[] {
  if (!traits) return [];
  const lines: string[] = [];
  if (traits.echo) lines.push("An echo: the API server answered with the version the object already had. Nothing was written.");
  if (traits.clocks?.clockOnly) lines.push("Only conditions' lastTransitionTime changed: a clock restamped on an unchanged status.");
  for (const { finding, type } of traits.clocks?.findings ?? []) {
    if (finding === "frozen") lines.push(`${type}: its status changed but its lastTransitionTime did not (a frozen clock).`);
    if (finding === "restamped") lines.push(`${type}: its lastTransitionTime moved while its status stayed (a restamped clock).`);
    if (finding === "predates") lines.push(`${type}: written with a lastTransitionTime older than the object (a default left in place).`);
  }
  return lines;
}

function keptVerdict(picked: PickedWriteAnswer["write"], audited: PickedWriteAnswer["audited"]): { kept: "yes" | "no" | "unknown"; text: string } {
  const preconditions = audited?.evidence === "same-precondition" || audited?.evidence === "precondition-moved" ? NOOP_EVIDENCE_TEXT[audited.evidence] : null;
  if (picked.class === "no-op" && preconditions) return { kept: "no", text: `Changed nothing: ${preconditions}.` };
  if (picked.class === "unknown" && audited?.noop === false && preconditions)
    return {
      kept: "unknown",
      text: `Changed the object (${preconditions}), but the audit log has no bodies: whether it changed anything the profile keeps is not known.`,
    };
  switch (picked.class) {
    case "routed":
      return { kept: "yes", text: "Changed what consumers route on (the routed projection), which the profile keeps." };
    case "unrouted":
      return { kept: "yes", text: "Changed fields the profile keeps, but not what consumers route on." };
    case "create":
      return { kept: "yes", text: "Created the object." };
    case "delete":
      return { kept: "yes", text: "Deleted the object." };
    case "no-op":
      return { kept: "no", text: "Changed nothing the profile keeps: the object was the same once ignored fields are left out." };
    default:
      return {
        kept: "unknown",
        text: "Cannot say: the audit log does not show the object after this request (no bodies at Metadata level, or answered with another kind, as kubectl scale is), it is the first version seen of this object, or the write before it changed the object without the log showing how.",
      };
  }
}

interface Props {
  picked?: PickedWriteAnswer;
  loading: boolean;
  error: Error | null;
  onStep: (seq: number) => void;
  /** to the write `step` places on, counting only routed or marked writes */
  onMove: (step: number, only?: PickOnly) => void;
}

/** The jumps to the routed or marked write before and after: [test id, label, title, step, which writes]. */
type Move = readonly [string, string, string, number, PickOnly];
const EARLIER: readonly Move[] = [
  ["routed-earlier", "← routed", "The routed write before this one (N)", -1, "routed"],
  ["marked-earlier", "← marked", "The echo or clock fault before this one (M)", -1, "marked"],
];
const LATER: readonly Move[] = [
  ["marked-later", "marked →", "The next echo or clock fault (m)", 1, "marked"],
  ["routed-later", "routed →", "The next routed write: what the consumer acts on changed (n)", 1, "routed"],
];

function MoveButtons({ moves, onMove }: { moves: readonly Move[]; onMove: Props["onMove"] }) {
  return moves.map(([id, label, title, step, only]) => (
    <button key={id} type="button" data-testid={id} className="rounded border border-[var(--border)] px-2" title={title} onClick={() => onMove(step, only)}>
      {label}
    </button>
  ));
}

export function WriteDiff({ picked, loading, error, onStep, onMove }: Props) {
  if (error) return <p className="text-[var(--err-fg)]">{error.message}</p>;
  if (!picked)
    return (
      <p className="text-[var(--muted)]">
        {loading
          ? "Loading the write…"
          : "Click the timeline, or press → , to see a write: what it changed, who wrote it, and whether the consumer's view changed."}
      </p>
    );
  const { write } = picked;
  const verdict = keptVerdict(write, picked.audited);
  return (
    <div data-seq={write.seq}>
      <div className="mb-2 flex flex-wrap items-center gap-3">
        <span className="font-semibold tabular" data-testid="diff-time" data-ts={write.tsMs}>
          {formatUtc(write.tsMs)}
        </span>
        <span className="text-[var(--muted)] tabular" data-testid="diff-place">
          write {picked.index.toLocaleString("en-US")} of {picked.total.toLocaleString("en-US")}
        </span>
        <span style={{ color: CLASS_COLORS[write.class] }} data-testid="diff-class">
          {write.class}
          {write.heartbeat ? " (heartbeat)" : ""}
        </span>
        <span>
          by{" "}
          <span className="font-mono" data-testid="diff-writer">
            {write.writer}
          </span>
        </span>
        <span className="text-[var(--muted)]" data-testid="diff-source">
          source: {write.source}
          {write.request
            ? ` · ${write.request.verb}${write.request.subresource ? ` /${write.request.subresource}` : ""} · ${write.request.userAgent || "no user agent"} · HTTP ${write.request.code || "?"}${write.request.latencyMs === null ? "" : ` in ${write.request.latencyMs.toFixed(0)} ms`}`
            : ""}
        </span>
        <span className="ml-auto flex flex-wrap gap-1">
          <MoveButtons moves={EARLIER} onMove={onMove} />
          <button
            type="button"
            data-testid="write-earlier"
            className="rounded border border-[var(--border)] px-2 disabled:opacity-40"
            disabled={picked.previousSeq === null}
            onClick={() => picked.previousSeq !== null && onStep(picked.previousSeq)}
            title="The write before this one (←)"
          >
            ← earlier
          </button>
          <button
            type="button"
            data-testid="write-later"
            className="rounded border border-[var(--border)] px-2 disabled:opacity-40"
            disabled={picked.nextSeq === null}
            onClick={() => picked.nextSeq !== null && onStep(picked.nextSeq)}
            title="The write after this one (→)"
          >
            later →
          </button>
          <MoveButtons moves={LATER} onMove={onMove} />
        </span>
      </div>
      <p className="mb-2 text-sm" data-testid="diff-kept" data-kept={verdict.kept}>
        {verdict.text}
      </p>
      {traitLines(write.traits).length > 0 && (
        <ul className="mb-2 space-y-0.5 text-sm" data-testid="diff-traits">
          {traitLines(write.traits).map((line) => (
            <li key={line} className="rounded bg-[var(--warn-bg)] px-2 text-[var(--warn-fg)]">
              {line}
            </li>
          ))}
        </ul>
      )}
      <p className="mb-2 text-xs text-[var(--muted)]">
        {/* A write with nothing to compare it with carries no projection: say so rather than nothing. */}
        Routed projection after this write: {projectionText(Object.keys(write.projection).length > 0 ? write.projection : null)}
      </p>
      {write.changes.length > 0 && (
        <table className="w-full table-fixed font-mono text-xs">
          <thead className="text-[var(--muted)]">
            <tr>
              <th className="w-1/4 px-2 py-1 text-left font-medium">field</th>
              <th className="px-2 py-1 text-left font-medium">before</th>
              <th className="px-2 py-1 text-left font-medium">after</th>
            </tr>
          </thead>
          <tbody>
            {write.changes.map((c) => (
              <tr key={c.path} data-change={c.path} className="border-t border-[var(--border)] align-top">
                <td className="break-all px-2 py-1">{c.path || "(whole object)"}</td>
                <td className="break-all px-2 py-1 text-[var(--err-fg)]">{valueText(c.before).slice(0, 2000)}</td>
                <td className="break-all px-2 py-1 text-green-700 dark:text-green-400">{valueText(c.after).slice(0, 2000)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}
