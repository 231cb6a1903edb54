"use client";
/**
 * Every panel renders through this ladder: skeleton on the first load → error → empty → content,
 * with Prometheus's notices on top and the PromQL at the bottom. Old data stays visible while a
 * new range loads; a failed refresh says so above the stale data instead of hiding it.
 */
import type { ReactNode } from "react";
import type { ApiSuccess } from "@/lib/api/envelope";
import type { PanelData } from "@/lib/panels/run-panel";
import { panelCsv } from "@/lib/format/csv";
import { formatRange } from "@/lib/format/time";
import { isBusy } from "@/lib/query/hooks";
import { ApiClientError } from "@/lib/api/fetch-envelope";
import { Notices } from "./notices";
import { panelPng } from "./panel-png";
import { RetryButton } from "./retry-button";

export interface PanelState {
  data?: ApiSuccess<PanelData>;
  error: Error | null;
  isLoading: boolean;
  isFetching: boolean;
  /** the last failure while retries are still running */
  failureReason?: Error | null;
  /** asks again (React Query's refetch): every failed panel offers it */
  refetch?: () => unknown;
}

interface Props {
  id: string;
  title: string;
  description: string;
  state: PanelState;
  /** Shown instead of querying, e.g. "select a resource". */
  idleMessage?: string;
  className?: string;
  /** false for tables: they export as CSV only */
  chart?: boolean;
  children: (data: PanelData) => ReactNode;
}

export function PanelFrame({ id, title, description, state, idleMessage, className, chart = true, children }: Props) {
  const { data, error, isLoading, isFetching } = state;
  const panel = data?.data;
  // Busy (Churnscope is holding queries back) shows at once, through the retries, not only after the last one.
  const busy = !data && (isBusy(error) || (isLoading && isBusy(state.failureReason)));
  // What a snapshot does not hold is a fact about the snapshot, not a failure: said plainly, never in red.
  const notHeld = error instanceof ApiClientError && error.errorType === "not_in_snapshot" ? error.message : undefined;
  return (
    <section
      data-panel={id}
      data-state={
        idleMessage
          ? "idle"
          : busy
            ? "busy"
            : notHeld
              ? "not-held"
              : isLoading
                ? "loading"
                : error && !data
                  ? "error"
                  : panel && panel.series.length === 0
                    ? "empty"
                    : "ready"
      }
      // Still showing the previous answer while the new one loads.
      data-updating={isFetching && !isLoading ? "" : undefined}
      className={`flex min-w-0 flex-col rounded-md border border-[var(--border)] bg-[var(--panel)] p-3 ${className ?? ""}`}
    >
      <header className="mb-2 flex items-baseline gap-2">
        <h2 className="text-sm font-semibold">{title}</h2>
        {panel && <span className="text-xs text-[var(--muted)]">{panel.unit}</span>}
        {panel?.estimate && (
          <span className="rounded bg-[var(--warn-bg)] px-1.5 text-[10px] font-semibold uppercase tracking-wide text-[var(--warn-fg)]" title={panel.estimate}>
            estimate
          </span>
        )}
        <span className="ml-auto text-xs text-[var(--muted)]" aria-live="polite" title="the previous answer is shown faded until the new one comes">
          {isFetching && !isLoading ? "updating…" : ""}
        </span>
      </header>
      {/* On a phone the description waits behind "About" at the panel's foot, so the chart comes first. */}
      <p className="mb-2 hidden text-xs text-[var(--muted)] [overflow-wrap:anywhere] sm:block">{description}</p>
      {idleMessage || notHeld ? (
        <div role={notHeld ? "status" : undefined} className="flex h-40 items-center justify-center px-4 text-center text-sm text-[var(--muted)]">
          {idleMessage ?? `Not in this snapshot: ${notHeld}.`}
        </div>
      ) : busy ? (
        <div role="status" data-busy="true" className="rounded bg-[var(--warn-bg)] px-3 py-2 text-sm text-[var(--warn-fg)]">
          <div className="font-semibold">Busy: Churnscope is holding back queries to Prometheus</div>
          <div className="break-words">
            {(error ?? state.failureReason)?.message} {isFetching ? "Retrying…" : state.refetch && <RetryButton onRetry={state.refetch} />}
          </div>
        </div>
      ) : isLoading ? (
        <div className="h-48 animate-pulse rounded bg-[var(--grid)]" aria-label="loading" />
      ) : error && !data ? (
        <div role="alert" className="rounded bg-[var(--err-bg)] px-3 py-2 text-sm text-[var(--err-fg)]">
          <div className="font-semibold">Query failed</div>
          <div className="break-words">{error.message}</div>
          {state.refetch && <RetryButton onRetry={state.refetch} busy={isFetching} />}
        </div>
      ) : data && panel ? (
        <>
          {error && (
            <div role="alert" className="mb-2 rounded bg-[var(--err-bg)] px-2 py-1 text-xs text-[var(--err-fg)]">
              Refresh failed, showing the previous result: {error.message} {state.refetch && <RetryButton onRetry={state.refetch} busy={isFetching} />}
            </div>
          )}
          <Notices warnings={data.warnings} infos={data.infos} />
          {panel.estimate && <p className="mb-2 text-xs text-[var(--muted)]">{panel.estimate}</p>}
          {panel.series.length === 0 ? (
            <div className="flex h-32 items-center justify-center text-sm text-[var(--muted)]">No data in this range.</div>
          ) : (
            // A stale answer stays readable while the new one comes, but does not pass for it.
            <div className={isFetching && !isLoading ? "opacity-60 transition-opacity" : undefined}>{children(panel)}</div>
          )}
          <div className="mt-2 flex items-start gap-3 text-xs text-[var(--muted)]">
            <details className="min-w-0 flex-1">
              <summary className="cursor-pointer select-none">
                <span className="sm:hidden">About · </span>PromQL · step {panel.stepSeconds}s
              </summary>
              <p className="mt-1 [overflow-wrap:anywhere] sm:hidden">{description}</p>
              {panel.queries.map((q, i) => (
                <pre key={i} className="mt-1 overflow-x-auto whitespace-pre-wrap break-all rounded bg-[var(--bg)] p-2 font-mono">
                  {q.name ? `# ${q.name}\n` : ""}
                  {q.promql}
                </pre>
              ))}
            </details>
            <a
              data-testid="panel-csv"
              className="text-[var(--accent)] hover:underline"
              download={`${id}.csv`}
              href="#"
              onClick={(e) => {
                // Built on click from the data on screen, so the file is exactly what the panel shows.
                e.currentTarget.href = URL.createObjectURL(new Blob([panelCsv(panel)], { type: "text/csv" }));
              }}
            >
              CSV
            </a>
            {chart && panel.series.length > 0 && (
              <button
                type="button"
                data-testid="panel-png"
                className="text-[var(--accent)] hover:underline"
                title="Download this chart as a PNG with its title, range and legend"
                onClick={(e) => {
                  const section = e.currentTarget.closest("section");
                  if (!section) return;
                  panelPng(section, `${title} (${panel.unit})`, `${formatRange(panel.startMs, panel.endMs)} UTC · step ${panel.stepSeconds}s`).then(
                    (blob) => {
                      const link = document.createElement("a");
                      link.href = URL.createObjectURL(blob);
                      link.download = `${id}.png`;
                      link.click();
                    },
                    (error: Error) => window.alert(error.message),
                  );
                }}
              >
                PNG
              </button>
            )}
          </div>
        </>
      ) : null}
    </section>
  );
}
