"use client";
/**
 * What the writers of a scope get wrong, from the versions the store saw: condition clocks that froze, were restamped
 * or predate their object (with a sentence wherever transition times cannot be trusted), each writer's echoes,
 * clock-only and ignored-only writes, and flaps with a damping what-if. Shown under Objects and Field churn.
 */
import Link from "next/link";
import { useState } from "react";
import { CsvLink } from "@/components/panels/csv-link";
import { formatNumber } from "@/lib/format/number";
import { apiUrl, useApi } from "@/lib/query/hooks";
import type { ExampleWrite, FlapsAnswer, TraitsAnswer } from "@/lib/wire/traits";
import { ApiNotices } from "./api-notices";
import { timelineHref } from "./object-link";

const FINDING_TEXT: Record<string, string> = {
  frozen: "status changed, clock kept",
  restamped: "clock moved, status kept",
  predates: "clock older than the object",
};

const SECTION = "rounded-md border border-[var(--border)] bg-[var(--panel)] p-3";
const TH = "px-2 py-1 font-medium";

type Scope = Record<string, string | number | undefined> & { from: number; to: number; snapshot?: string };

function Example({ example, scope }: { example: ExampleWrite | null; scope: Scope }) {
  if (!example) return <span className="text-[var(--muted)]">–</span>;
  return (
    <Link
      prefetch={false}
      className="text-[var(--accent)] hover:underline"
      href={timelineHref(example.key, { from: scope.from, to: scope.to, snapshot: scope.snapshot, write: example.seq })}
      title="Open this write on its object's timeline"
    >
      {example.key.namespace ? `${example.key.namespace}/` : ""}
      {example.key.name}
    </Link>
  );
}

/** Said at the top of a page whose scope has condition clocks that cannot be trusted: the sentences are further down. */
export function ClockWarning({ scope }: { scope: Scope }) {
  const data = useApi<TraitsAnswer>(apiUrl("/api/objects/traits", scope)).data?.data;
  if (!data || data.sentences.length === 0) return null;
  return (
    <p data-testid="clock-warning" className="rounded bg-[var(--warn-bg)] px-3 py-1 text-sm text-[var(--warn-fg)]">
      {data.sentences[0]}{" "}
      <a href="#clock-faults" className="underline">
        {data.sentences.length > 1 ? `${data.sentences.length - 1} more, and what each writer got wrong ↓` : "What each writer got wrong ↓"}
      </a>
    </p>
  );
}

/** Condition clocks and echoes: the sentences, the faults table, the writers table. */
export function ClockFaults({ scope, writers = true }: { scope: Scope; writers?: boolean }) {
  const answer = useApi<TraitsAnswer>(apiUrl("/api/objects/traits", scope));
  const data = answer.data?.data;
  return (
    <section id="clock-faults" data-testid="clock-faults" data-state={data ? "ready" : "loading"} className={SECTION}>
      <h2 className="text-sm font-semibold">Condition clocks{writers ? " and echoes" : ""}</h2>
      <ApiNotices error={answer.error} answer={answer.data} retry={answer.refetch} />
      {data && data.sentences.length > 0 && (
        <ul className="my-2 space-y-1" data-testid="clock-sentences">
          {data.sentences.map((s) => (
            <li key={s} className="rounded bg-[var(--warn-bg)] px-2 py-1 text-sm text-[var(--warn-fg)]">
              {s}
            </li>
          ))}
        </ul>
      )}
      <p className="mb-2 text-xs text-[var(--muted)]">
        Each write compared with the version before it, for every condition under status: a <b>frozen</b> clock (status changed, lastTransitionTime kept), a{" "}
        <b>restamped</b> one (lastTransitionTime moved, status kept), one <b>older than its object</b> (a 1970-01-01 default). Transitions elsewhere in
        Churnscope are counted from the versions seen, never from lastTransitionTime.
      </p>
      {data && data.clocks.length === 0 ? (
        <p className="text-sm text-[var(--muted)]" data-testid="no-clock-faults">
          No condition clock faults in this range.
        </p>
      ) : (
        <div className="overflow-x-auto">
          <table className="w-full min-w-[760px] text-sm tabular" data-testid="clock-table">
            <thead className="text-xs text-[var(--muted)]">
              <tr>
                <th className={`${TH} text-left`}>kind</th>
                <th className={`${TH} text-left`}>condition</th>
                <th className={`${TH} text-left`}>fault</th>
                <th className={`${TH} text-left`}>writer</th>
                <th className={`${TH} text-right`}>writes</th>
                <th className={`${TH} text-right`}>objects</th>
                <th className={`${TH} text-left`}>example</th>
              </tr>
            </thead>
            <tbody>
              {(data?.clocks ?? []).map((row) => (
                <tr
                  key={`${row.group}/${row.kind}/${row.conditionType}/${row.finding}/${row.writer}`}
                  data-clock={`${row.kind}|${row.conditionType}|${row.finding}|${row.writer}`}
                  className="border-t border-[var(--border)]"
                >
                  <td className="px-2 py-1">{row.kind}</td>
                  <td className="px-2 py-1 font-mono text-xs">{row.conditionType}</td>
                  <td className="px-2 py-1">
                    <b>{row.finding}</b> <span className="text-xs text-[var(--muted)]">{FINDING_TEXT[row.finding]}</span>
                  </td>
                  <td className="break-words px-2 py-1 text-xs">{row.writer}</td>
                  <td className="px-2 py-1 text-right font-mono" data-cell="writes">
                    {formatNumber(row.writes, true)}
                  </td>
                  <td className="px-2 py-1 text-right font-mono" data-cell="objects">
                    {formatNumber(row.objects, true)}
                  </td>
                  <td className="px-2 py-1 text-xs">
                    <Example example={row.example} scope={scope} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {writers && data && data.writers.length > 0 && (
        <div className="mt-3 overflow-x-auto">
          <div className="flex items-baseline gap-3">
            <h3 className="text-sm font-semibold">Writes that changed nothing, or only clocks, by writer</h3>
            <CsvLink
              name="echoes-by-writer"
              testId="echoes-csv"
              header={["writer", "echoes", "clock-only", "ignored-only", "of these no-op", "objects"]}
              rows={() => data.writers.map((w) => [w.writer, w.echoes, w.clockOnly, w.ignoredOnly, w.noop, w.objects])}
            />
          </div>
          <p className="mb-1 text-xs text-[var(--muted)]">
            <b>echo</b>: the API server answered with the version the object already had (only an audit log sees these); <b>clock-only</b>: a new version that
            differs only in conditions&apos; lastTransitionTime; <b>ignored-only</b>: a new version that differs only where the kind&apos;s profile ignores. The
            no-op column of Objects (and its wasted ratio) holds echoes and ignored-only writes, and clock-only writes where the profile ignores clocks;
            clock-only writes of other kinds are unrouted.
          </p>
          <table className="w-full min-w-[760px] text-sm tabular" data-testid="echo-table">
            <thead className="text-xs text-[var(--muted)]">
              <tr>
                <th className={`${TH} text-left`}>writer</th>
                <th className={`${TH} text-right`}>echoes</th>
                <th className={`${TH} text-right`}>clock-only</th>
                <th className={`${TH} text-right`}>ignored-only</th>
                <th className={`${TH} text-right`} title="of these, writes of the class no-op">
                  no-op
                </th>
                <th className={`${TH} text-right`}>objects</th>
                <th className={`${TH} text-left`}>example</th>
              </tr>
            </thead>
            <tbody>
              {data.writers.map((w) => (
                <tr key={w.writer} data-writer={w.writer} className="border-t border-[var(--border)]">
                  <td className="break-words px-2 py-1 text-xs">{w.writer}</td>
                  <td className="px-2 py-1 text-right font-mono" data-cell="echoes">
                    {formatNumber(w.echoes, true)}
                  </td>
                  <td className="px-2 py-1 text-right font-mono" data-cell="clock-only">
                    {formatNumber(w.clockOnly, true)}
                  </td>
                  <td className="px-2 py-1 text-right font-mono" data-cell="ignored-only">
                    {formatNumber(w.ignoredOnly, true)}
                  </td>
                  <td className="px-2 py-1 text-right font-mono text-[var(--muted)]" data-cell="noop">
                    {formatNumber(w.noop, true)}
                  </td>
                  <td className="px-2 py-1 text-right font-mono">{formatNumber(w.objects, true)}</td>
                  <td className="px-2 py-1 text-xs">
                    <Example example={w.example} scope={scope} />
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}

const seconds = (ms: number | null) => (ms === null ? "–" : ms < 60_000 ? `${formatNumber(ms / 1000)} s` : `${formatNumber(ms / 60_000)} min`);

/** Flaps and the hold-down what-if; the window and the hold are the caller's (kept in the URL). */
export function Flaps({
  scope,
  settings,
  onSettings,
}: {
  scope: Scope;
  settings: { window: number; holdField: string; holdValue: string; hold: number };
  onSettings: (next: Partial<{ window: number; holdField: string; holdValue: string; hold: number }>) => void;
}) {
  const answer = useApi<FlapsAnswer>(apiUrl("/api/objects/flaps", { ...scope, ...settings }));
  const data = answer.data?.data;
  const [draft, setDraft] = useState(settings);
  const input = "w-20 rounded border border-[var(--border)] bg-transparent px-1 py-0.5 text-sm";
  const flaps = data?.flaps;
  const hold = data?.hold;
  return (
    <section data-testid="flaps" data-state={data ? "ready" : "loading"} className={SECTION}>
      <h2 className="text-sm font-semibold">Flaps, and what a hold-down would have done</h2>
      <form
        className="my-2 flex flex-wrap items-center gap-2 text-sm"
        onSubmit={(e) => {
          e.preventDefault();
          onSettings(draft);
        }}
      >
        <label className="flex items-center gap-1">
          undone within
          <input
            data-testid="flap-window"
            className={input}
            type="number"
            min={1}
            max={86_400}
            value={draft.window}
            onChange={(e) => setDraft({ ...draft, window: Number(e.target.value) })}
          />
          s
        </label>
        <span className="text-[var(--muted)]">·</span>
        <label className="flex items-center gap-1">
          hold
          <select
            data-testid="hold-field"
            className="rounded border border-[var(--border)] bg-transparent px-1 py-0.5 text-sm"
            value={draft.holdField}
            onChange={(e) => setDraft({ ...draft, holdField: e.target.value })}
          >
            {[...new Set([draft.holdField, ...(data?.fields ?? [])])].map((f) => (
              <option key={f}>{f}</option>
            ))}
          </select>
          =
          <input data-testid="hold-value" className={input} value={draft.holdValue} onChange={(e) => setDraft({ ...draft, holdValue: e.target.value })} />
          for
          <input
            data-testid="hold-seconds"
            className={input}
            type="number"
            min={0}
            max={86_400}
            value={draft.hold}
            onChange={(e) => setDraft({ ...draft, hold: Number(e.target.value) })}
          />
          s
        </label>
        <button type="submit" className="rounded border border-[var(--border)] px-2 py-0.5">
          apply
        </button>
      </form>
      <ApiNotices error={answer.error} answer={answer.data} retry={answer.refetch} />
      {flaps && (
        <dl className="grid grid-cols-2 gap-x-4 gap-y-1 text-sm sm:grid-cols-3 lg:grid-cols-6" data-testid="flap-figures">
          {(
            [
              ["routed changes", formatNumber(flaps.changes, true), "changes"],
              ["flaps", formatNumber(flaps.flaps, true), "flaps"],
              ["flaps per hour", formatNumber(flaps.flapsPerHour), "per-hour"],
              ["median time in the other state", seconds(flaps.medianInStateMs), "median"],
              ["objects flapping", formatNumber(flaps.objectsFlapping, true), "objects"],
              ["changes that were half of a flap", formatNumber(flaps.flapChanges, true), "flap-changes"],
            ] as const
          ).map(([label, value, id]) => (
            <div key={id}>
              <dt className="text-xs text-[var(--muted)]">{label}</dt>
              <dd className="font-mono" data-figure={id}>
                {value}
              </dd>
            </div>
          ))}
        </dl>
      )}
      {hold && (
        <p className="mt-2 rounded bg-[var(--bg)] px-2 py-1 text-sm" data-testid="hold-figures">
          With {hold.rule.field}={hold.rule.value} held {formatNumber(hold.rule.holdMs / 1000)} s, the consumer would have made{" "}
          <b data-figure="rebuilds-with">{formatNumber(hold.rebuildsWith, true)}</b> rebuilds instead of{" "}
          <b data-figure="rebuilds-without">{formatNumber(hold.rebuildsWithout, true)}</b>: <span data-figure="absorbed">{hold.absorbed}</span> changes to{" "}
          {hold.rule.value} undone within the hold never reached it; <span data-figure="delayed">{hold.delayed}</span> that lasted reached it exactly{" "}
          {formatNumber(hold.rule.holdMs / 1000)} s late; <span data-figure="immediate">{hold.immediate}</span> others (a tunnel coming online) reached it at
          once, as today{hold.stillHeld > 0 ? `; ${hold.stillHeld} still held at the range's end` : ""}.
        </p>
      )}
      {data && !hold && (
        <p className="mt-2 text-xs text-[var(--muted)]">
          {data.flaps.changes === 0
            ? "No routed change in this range: nothing flapped, and a hold-down would change nothing."
            : `The scope's routed projections have no field ${settings.holdField}: pick one to replay a hold-down over.`}
        </p>
      )}
      {flaps && flaps.top.length > 0 && (
        <div className="mt-2 overflow-x-auto">
          <table className="w-full min-w-[640px] text-sm tabular" data-testid="flap-table">
            <thead className="text-xs text-[var(--muted)]">
              <tr>
                <th className={`${TH} text-left`}>object</th>
                <th className={`${TH} text-left`}>kind</th>
                <th className={`${TH} text-right`}>flaps</th>
                <th className={`${TH} text-right`}>routed changes</th>
                <th className={`${TH} text-right`}>shortest time in the other state</th>
              </tr>
            </thead>
            <tbody>
              {flaps.top.map((o) => (
                <tr
                  key={`${o.key.cluster}/${o.key.group}/${o.key.kind}/${o.key.namespace}/${o.key.name}`}
                  data-flapping={o.key.name}
                  className="border-t border-[var(--border)]"
                >
                  <td className="px-2 py-1">
                    <Link prefetch={false} className="text-[var(--accent)] hover:underline" href={timelineHref(o.key, scope)}>
                      {o.key.namespace ? `${o.key.namespace}/` : ""}
                      {o.key.name}
                    </Link>
                  </td>
                  <td className="px-2 py-1">{o.key.kind}</td>
                  <td className="px-2 py-1 text-right font-mono">{formatNumber(o.flaps, true)}</td>
                  <td className="px-2 py-1 text-right font-mono">{formatNumber(o.changes, true)}</td>
                  <td className="px-2 py-1 text-right font-mono">{seconds(o.shortestMs)}</td>
                </tr>
              ))}
            </tbody>
          </table>
        </div>
      )}
    </section>
  );
}
