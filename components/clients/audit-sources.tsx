"use client";
/**
 * The audit bucket sources (audit.sources) on the live Clients page: per source, what was read and when, and what
 * failed, so a managed cluster's missing hour is seen here before it is missed in a chart. Nothing when none is set.
 */
import { formatBytes, formatNumber } from "@/lib/format/number";
import { formatUtc } from "@/lib/format/time";
import { useApi } from "@/lib/query/hooks";
import type { AuditSourcesAnswer, AuditSourceStatus, BucketObjectStatus } from "@/lib/wire/audit";

const REFRESH_MS = 15_000;

function ObjectRows({ objects, label, open }: { objects: BucketObjectStatus[]; label: string; open: boolean }) {
  if (objects.length === 0) return null;
  return (
    <details className="text-xs" open={open}>
      <summary className="cursor-pointer text-[var(--muted)]">
        {label} ({objects.length})
      </summary>
      <ul className="mt-1 space-y-1">
        {objects.map((o) => (
          <li key={o.key} data-outcome={o.outcome} className="break-all">
            <span className="font-mono">{o.key}</span>{" "}
            <span className="text-[var(--muted)]">
              {formatBytes(o.bytes)} · read {formatUtc(o.readMs)} · {formatNumber(o.requests, true)} requests
            </span>
            {o.outcome !== "read" && <div className="text-[var(--warn-fg)]">⚠ {o.detail}</div>}
          </li>
        ))}
      </ul>
    </details>
  );
}

function Source({ source: s }: { source: AuditSourceStatus }) {
  const failing = s.error !== null;
  return (
    <div data-testid="audit-source" data-source={s.name} data-state={failing ? "failing" : s.polls > 0 ? "ok" : "waiting"} className="space-y-1">
      <div className="flex flex-wrap items-baseline gap-x-3">
        <b>{s.name}</b>
        <span className="font-mono text-xs break-all">{s.location}</span>
        <span className="text-xs text-[var(--muted)]">
          into cluster {s.cluster}, every {s.pollSeconds} s
        </span>
      </div>
      <p className="text-xs" data-testid="audit-source-counts">
        {formatNumber(s.objects.read + s.objects.problems, true)} objects read ({formatBytes(s.bytes)}, {formatNumber(s.requests, true)} requests)
        {s.objects.problems > 0 && `, ${formatNumber(s.objects.problems, true)} with problems`}
        {s.objects.skipped > 0 && `, ${formatNumber(s.objects.skipped, true)} skipped`}
        {" · "}
        {s.lastSuccessMs !== null ? `last complete poll ${formatUtc(s.lastSuccessMs)}` : s.polls > 0 ? "no complete poll yet" : "not polled yet"}
        {s.polls > 0 && ` · ${formatNumber(s.polls, true)} polls`}
      </p>
      {failing && (
        <p role="alert" className="rounded bg-[var(--err-bg)] px-2 py-1 text-xs text-[var(--err-fg)]">
          {s.errorMs !== null && `${formatUtc(s.errorMs)}: `}
          {s.error}
        </p>
      )}
      <ObjectRows objects={s.troubled} label="read with problems or skipped" open />
      <ObjectRows objects={s.recent} label="last read" open={false} />
    </div>
  );
}

/** One source in the section's summary line: its name, whether it reads, and objects that need a look. */
function headline(s: AuditSourceStatus): string {
  if (s.error !== null) return `${s.name}: failing`;
  if (s.polls === 0) return `${s.name}: not polled yet`;
  const troubled = s.objects.problems + s.objects.skipped;
  const read = `${s.name}: ${formatNumber(s.objects.read + s.objects.problems, true)} objects read`;
  return troubled > 0 ? `${read}, ${formatNumber(troubled, true)} with problems or skipped` : read;
}

/** Collapsed to one line unless a source is failing, so the charts stay near the top on a phone. */
export function AuditSources() {
  const answer = useApi<AuditSourcesAnswer>("/api/audit/sources", { refetchMs: REFRESH_MS });
  const sources = answer.data?.data.sources ?? [];
  if (sources.length === 0) return null;
  const failing = sources.some((s) => s.error !== null);
  return (
    <details
      data-testid="audit-sources"
      open={failing || undefined}
      className="space-y-3 rounded-md border border-[var(--border)] bg-[var(--panel)] p-3 text-sm"
    >
      <summary className="cursor-pointer">
        <span className="font-semibold">Audit buckets</span>{" "}
        <span className={`text-xs ${failing ? "text-[var(--err-fg)]" : "text-[var(--muted)]"}`}>{sources.map(headline).join(" · ")}</span>
      </summary>
      {sources.map((s) => (
        <Source key={s.name} source={s} />
      ))}
    </details>
  );
}
