"use client";
/**
 * The Write load page (Q1, Q2): which resources' writes rose, when, by which verb and subresource,
 * on which API server, and how many of them changed nothing. All view state is in the URL.
 */
import { useQueryClient } from "@tanstack/react-query";
import { parseAsString, useQueryStates } from "nuqs";
import { useState } from "react";
import { PanelFrame } from "@/components/panels/panel-frame";
import { useElementWidth } from "@/components/panels/use-element-width";
import { TimeRangePicker } from "@/components/time-range/time-range-picker";
import { findPanel, type PanelDef } from "@/lib/panels/catalog";
import type { ApiServerEntry } from "@/lib/panels/apiservers";
import { joinResource, splitResource } from "@/lib/panels/params";
import { useApiservers, usePanel } from "@/lib/query/hooks";
import { formatRange } from "@/lib/format/time";
import { parseRangeParams, previousRange, resolveRange } from "@/lib/time/range";
import { PanelCard } from "./panel-card";
import { TotalsTable } from "./totals-table";

const urlState = {
  from: parseAsString.withDefault("now-6h"),
  to: parseAsString.withDefault("now"),
  apiserver: parseAsString,
  resource: parseAsString,
};

const panel = (id: string): PanelDef => {
  const def = findPanel(id);
  if (!def) throw new Error(`panel ${id} missing from the catalog`);
  return def;
};

interface Props {
  initialNowMs: number;
  configuredApiservers: ApiServerEntry[];
}

export function WriteLoadView({ initialNowMs, configuredApiservers }: Props) {
  const [url, setUrl] = useQueryStates(urlState, { history: "push" });
  const [nowMs, setNowMs] = useState(initialNowMs);
  const queryClient = useQueryClient();
  const [mainRef, mainWidth] = useElementWidth<HTMLElement>();

  const { range, errors } = parseRangeParams(url.from, url.to);
  const { startMs, endMs } = resolveRange(range, nowMs);
  const apiserver = url.apiserver ?? undefined;
  const resource = url.resource ?? undefined;
  // About one point per pixel: full-width charts and half-width ones on wide screens.
  const fullWidth = Math.max(100, Math.round(mainWidth / 100) * 100);
  const halfWidth = mainWidth >= 1024 ? Math.max(100, Math.round(mainWidth / 2 / 100) * 100) : fullWidth;
  const base = { startMs, endMs, apiserver, resource };
  const previous = previousRange({ startMs, endMs });

  const apiservers = useApiservers(startMs, endMs);
  const serverList = apiservers.data?.data ?? configuredApiservers;
  const totals = usePanel({ panel: "write-totals", startMs, endMs, apiserver, width: 1000 }, mainWidth > 0);
  const totalsBefore = usePanel({ panel: "write-totals", startMs: previous.startMs, endMs: previous.endMs, apiserver, width: 1000 }, mainWidth > 0);
  const resourceOptions = [
    ...new Set([...(resource ? [resource] : []), ...(totals.data?.data.series ?? []).map((s) => joinResource(s.labels.resource ?? "", s.labels.group))]),
  ].sort();

  const selectResource = (value: string | null) => setUrl({ resource: value || null });
  // A relative range re-resolves "now", which changes every query key and so fetches anew; an
  // absolute range keeps its keys, so only then are the cached results invalidated.
  const relative = range.from.kind === "relative" || range.to.kind === "relative";
  const refresh = () => (relative ? setNowMs(Date.now()) : void queryClient.invalidateQueries());

  return (
    <main ref={mainRef} className="mx-auto max-w-[1600px] space-y-3 p-3">
      <div className="flex flex-wrap items-center gap-3">
        <h1 className="text-lg font-semibold">Write load</h1>
        <label className="flex items-center gap-1 text-sm">
          <span className="text-[var(--muted)]">API server</span>
          <select
            data-testid="apiserver-select"
            className="rounded border border-[var(--border)] bg-[var(--panel)] px-2 py-1"
            value={apiserver ?? ""}
            onChange={(e) => setUrl({ apiserver: e.target.value || null })}
          >
            <option value="">All API servers</option>
            {serverList.map((s) => (
              <option key={s.job} value={s.job}>
                {s.job}
                {s.role !== "discovered" ? ` (${s.role})` : ""}
              </option>
            ))}
          </select>
        </label>
        <label className="flex items-center gap-1 text-sm">
          <span className="text-[var(--muted)]">Resource</span>
          <select
            data-testid="resource-select"
            className="max-w-[22rem] rounded border border-[var(--border)] bg-[var(--panel)] px-2 py-1"
            value={resource ?? ""}
            onChange={(e) => selectResource(e.target.value)}
          >
            <option value="">All resources</option>
            {resourceOptions.map((r) => (
              <option key={r} value={r}>
                {r}
              </option>
            ))}
          </select>
        </label>
        <div className="ml-auto">
          <TimeRangePicker
            from={url.from}
            to={url.to}
            startMs={startMs}
            endMs={endMs}
            onChange={(from, to) => {
              setNowMs(Date.now());
              void setUrl({ from, to });
            }}
            onRefresh={refresh}
          />
        </div>
      </div>
      <p className="text-xs text-[var(--muted)] tabular" data-testid="resolved-range">
        {formatRange(startMs, endMs)} (UTC){apiservers.error ? ` · API server list unavailable: ${apiservers.error.message}` : ""}
      </p>
      {errors.length > 0 && (
        <div role="alert" className="rounded bg-[var(--err-bg)] px-3 py-2 text-sm text-[var(--err-fg)]">
          The link&apos;s time range is not valid ({errors.join("; ")}). Showing the last 6 hours instead.
        </div>
      )}

      <PanelCard
        def={panel("writes-by-resource")}
        input={{ ...base, resource: undefined, width: fullWidth }}
        onSelectSeries={(labels) => selectResource(joinResource(labels.resource, labels.group))}
        selectedName={resource}
      />
      <div className="grid grid-cols-1 gap-3 lg:grid-cols-2">
        <PanelCard
          def={panel("writes-by-verb")}
          input={{ ...base, width: halfWidth }}
          idleMessage={resource ? undefined : "Pick a resource (legend, table or selector) to split its writes by verb and subresource."}
        />
        <PanelCard def={panel("effective-writes")} input={{ ...base, width: halfWidth }} />
        <PanelCard def={panel("write-errors")} input={{ ...base, width: halfWidth }} />
        <PanelCard def={panel("lease-renewals")} input={{ ...base, resource: undefined, width: halfWidth }} />
        <PanelCard def={panel("watch-fanout")} input={{ ...base, width: halfWidth }} />
      </div>
      <PanelFrame
        id="write-totals"
        title={`Write totals${resource ? ` (${splitResource(resource)[0]} highlighted)` : ""}`}
        description={`Writes in ${formatRange(startMs, endMs)} against the previous range of the same length. Click a resource to drill in.`}
        state={totals}
      >
        {(data) => (
          <TotalsTable
            current={data.series}
            previous={totalsBefore.data?.data.series}
            showJob={apiserver === undefined}
            selectedResource={resource}
            onSelectResource={selectResource}
          />
        )}
      </PanelFrame>
    </main>
  );
}
