"use client";
/**
 * The Write load page: which resources' writes rose, when, by which verb and subresource,
 * on which API server, and how many of them changed nothing. All view state is in the URL.
 */
import { MarkerList } from "@/components/panels/marker-list";
import { ChartZoomContext } from "@/components/panels/chart-zoom";
import { parseAsString, useQueryStates } from "nuqs";
import { PanelFrame } from "@/components/panels/panel-frame";
import { useElementWidth, useWidthCookie } from "@/components/panels/use-element-width";
import { chartWidths } from "@/lib/panels/panel-url";
import { findPanel } from "@/lib/panels/catalog";
import type { PanelDef } from "@/lib/panels/queries";
import type { ApiServerEntry } from "@/lib/panels/apiservers";
import { joinResource, splitResource } from "@/lib/panels/resource-name";
import { unknownValue } from "@/lib/format/param-notices";
import { useApiservers, useChanges, usePanel } from "@/lib/query/hooks";
import { useViewMarkers } from "@/components/panels/onset-marker";
import { writeLoadInputs, writeLoadRequests } from "@/lib/panels/write-load-requests";
import type { SnapshotInfo } from "@/lib/snapshot/format/schema";
import Link from "next/link";
import { objectsHref } from "@/components/objects/object-link";
import { ViewControls } from "@/components/time-range/view-controls";
import { useViewRange } from "@/components/time-range/use-view-range";
import { RangeStatus } from "@/components/time-range/range-status";
import { formatRange } from "@/lib/format/time";
import { useState } from "react";
import { usePhone } from "@/components/panels/use-phone";
import { CollapsedSignal } from "./collapsed-signal";
import { PanelCard } from "./panel-card";
import { TotalsTable } from "./totals-table";
import { DEFAULT_FROM, DEFAULT_TO } from "@/lib/time/range";

const urlState = {
  from: parseAsString.withDefault(DEFAULT_FROM),
  to: parseAsString.withDefault(DEFAULT_TO),
  apiserver: parseAsString,
  resource: parseAsString,
  dryRun: parseAsString,
};

/** A rate chart in the phone's swiped row: most of the screen wide, so the next one shows at the edge. */
const SWIPED = "w-[88%] shrink-0 snap-start sm:w-auto";

const panel = (id: string): PanelDef => {
  const def = findPanel(id);
  if (!def) throw new Error(`panel ${id} missing from the catalog`);
  return def;
};

interface Props {
  initialNowMs: number;
  configuredApiservers: ApiServerEntry[];
  /** set when the page shows a snapshot (or the replay) instead of Prometheus */
  snapshot?: SnapshotInfo;
}

export function WriteLoadView({ initialNowMs, configuredApiservers, snapshot }: Props) {
  const [url, setUrl] = useQueryStates(urlState, { history: "push" });
  const [mainRef, mainWidth] = useElementWidth<HTMLElement>();
  const { startMs, endMs, errors, controls, onZoom } = useViewRange(initialNowMs, snapshot, url.from, url.to, (from, to) => void setUrl({ from, to }));
  const includeDryRun = url.dryRun === "include";
  // An API server or resource the range does not have shows them all, and says so, rather than empty panels.
  const apiservers = useApiservers(startMs, endMs, !snapshot);
  const serverList = snapshot?.apiservers ?? apiservers.data?.data ?? configuredApiservers;
  const serversKnown = snapshot !== undefined || apiservers.data !== undefined;
  const askedApiserver = url.apiserver ?? undefined;
  const unknownApiserver = askedApiserver !== undefined && serversKnown && !serverList.some((s) => s.job === askedApiserver);
  const apiserver = unknownApiserver ? undefined : askedApiserver;
  // The totals do not depend on the resource: they say which resources the range has.
  const totalsInputs = writeLoadInputs(writeLoadRequests({ startMs, endMs, apiserver, includeDryRun }), chartWidths(mainWidth), snapshot?.id);
  const totals = usePanel(totalsInputs.totals, mainWidth > 0);
  const totalsBefore = usePanel(totalsInputs.totalsBefore, mainWidth > 0);
  const knownResources = snapshot
    ? (snapshot.resources[apiserver ?? ""] ?? [])
    : (totals.data?.data.series ?? []).map((s) => joinResource(s.labels.resource ?? "", s.labels.group));
  const resourcesKnown = snapshot !== undefined || totals.data !== undefined;
  const askedResource = url.resource ?? undefined;
  const unknownResource = askedResource !== undefined && resourcesKnown && knownResources.length > 0 && !knownResources.includes(askedResource);
  const resource = unknownResource ? undefined : askedResource;
  const notices = [
    ...(unknownApiserver
      ? [
          unknownValue(
            "API server",
            askedApiserver,
            serverList.map((s) => s.job),
            "showing every API server",
          ),
        ]
      : []),
    ...(unknownResource ? [unknownValue("resource", askedResource, [...knownResources].sort(), "showing every resource")] : []),
  ];
  const calls = writeLoadRequests({ startMs, endMs, apiserver, resource, includeDryRun });
  const inputs = writeLoadInputs(calls, chartWidths(mainWidth), snapshot?.id);
  useWidthCookie(mainWidth);
  const byResource = usePanel(inputs.writesByResource, mainWidth > 0);
  // The signal panels further down are asked for once the write rates have answered (SIGNAL_CALLS).
  const signalsReady = byResource.data !== undefined || byResource.isError;
  const { markers, onset } = useViewMarkers(startMs, endMs, snapshot, resource);
  const changes = useChanges(startMs, endMs, onset?.timeMs, snapshot?.id).data?.data;

  const phone = usePhone();
  const [opened, setOpened] = useState<ReadonlySet<string>>(new Set());

  const resourceOptions = [...new Set([...(resource ? [resource] : []), ...knownResources])].sort();

  const selectResource = (value: string | null) => setUrl({ resource: value || null });

  return (
    <ChartZoomContext value={onZoom}>
      <main ref={mainRef} data-view="write-load" className="mx-auto max-w-[1600px] space-y-3 p-3">
        <div className="flex flex-wrap items-center gap-3">
          <h1 className="text-lg font-semibold">Write load</h1>
          <label className="flex min-w-0 max-w-full items-center gap-1 text-sm">
            <span className="text-[var(--muted)]">API server</span>
            <select
              data-testid="apiserver-select"
              className="min-w-0 max-w-full rounded border border-[var(--border)] bg-[var(--panel)] px-2 py-1"
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
          <label className="flex min-w-0 max-w-full items-center gap-1 text-sm">
            <span className="text-[var(--muted)]">Resource</span>
            <select
              data-testid="resource-select"
              className="min-w-0 max-w-full rounded border sm:max-w-[22rem] border-[var(--border)] bg-[var(--panel)] px-2 py-1"
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
          {resource && (
            <Link
              prefetch={false}
              data-testid="objects-link"
              className="text-sm text-[var(--accent)] hover:underline"
              href={objectsHref(resource, { from: startMs, to: endMs, snapshot: snapshot?.id })}
              title="Which objects of this resource were written, by whom, and whether the writes changed what consumers route on"
            >
              Objects →
            </Link>
          )}
          {snapshot && !includeDryRun ? (
            <span className="text-sm text-[var(--muted)]" title="A snapshot holds the write panels as its page showed them: without requests sent with ?dryRun">
              Dry runs left out
            </span>
          ) : (
            <label
              className="flex items-center gap-1 text-sm"
              title="Requests sent with ?dryRun are validated and never stored; they are left out of the write panels unless counted here"
            >
              <input
                type="checkbox"
                data-testid="dry-run-toggle"
                checked={includeDryRun}
                onChange={(e) => void setUrl({ dryRun: e.target.checked ? "include" : null })}
              />
              <span className="text-[var(--muted)]">Count dry runs</span>
            </label>
          )}
          <ViewControls snapshot={snapshot} {...controls} download={{ apiserver, resource }} />
        </div>
        <RangeStatus
          snapshot={snapshot}
          view="write-load"
          startMs={startMs}
          endMs={endMs}
          errors={errors}
          fallback="the last 6 hours"
          notices={notices}
          note={apiservers.error ? `API server list unavailable: ${apiservers.error.message}` : undefined}
        />
        {!snapshot &&
          (apiservers.data?.warnings ?? []).map((warning) => (
            <p
              key={warning}
              role="status"
              data-testid="request-metrics-missing"
              className="rounded bg-[var(--warn-bg)] px-3 py-2 text-sm text-[var(--warn-fg)]"
            >
              {warning}
            </p>
          ))}

        <MarkerList markers={markers} onsetSummary={onset?.summary} changes={changes ?? "loading"} />
        <PanelCard
          def={panel("writes-by-resource")}
          input={inputs.writesByResource}
          onSelectSeries={(labels) => selectResource(joinResource(labels.resource, labels.group))}
          selectedName={resource}
          markers={markers}
        />
        {/* On a phone the five charts are one row to swipe through, a chart's height in all; wider, a grid. */}
        <p className="text-xs text-[var(--muted)] sm:hidden">Five more charts of the writes: swipe sideways →</p>
        <div
          data-testid="rate-charts"
          className="-mx-1 flex snap-x snap-mandatory gap-3 overflow-x-auto px-1 pb-1 sm:mx-0 sm:grid sm:grid-cols-1 sm:overflow-visible sm:px-0 lg:grid-cols-2"
        >
          <PanelCard
            className={SWIPED}
            def={panel("writes-by-verb")}
            input={inputs.writesByVerb ?? { panel: "writes-by-verb", startMs, endMs, apiserver, width: chartWidths(mainWidth).half }}
            idleMessage={resource ? undefined : "Pick a resource (legend, table or selector) to split its writes by verb and subresource."}
            markers={markers}
          />
          <PanelCard className={SWIPED} def={panel("effective-writes")} input={inputs.effectiveWrites} markers={markers} />
          <PanelCard className={SWIPED} def={panel("write-errors")} input={inputs.writeErrors} markers={markers} />
          <PanelCard className={SWIPED} def={panel("lease-renewals")} input={inputs.leaseRenewals} markers={markers} />
          <PanelCard className={SWIPED} def={panel("watch-fanout")} input={inputs.watchFanout} markers={markers} />
        </div>
        <h2 className="pt-2 text-base font-semibold" id="write-signals">
          What the writes changed and cost
        </h2>
        <p className="text-xs text-[var(--muted)]">
          Each layer&apos;s own counts: the changes etcd stored and the updates consumers skipped, the watchers and seats one write costs, and the sizes it
          moves. A layer that is not scraped is named under its panel.
        </p>
        <div className="grid grid-cols-1 gap-3 lg:grid-cols-2">
          {(
            [
              ["noop-evidence", inputs.noopEvidence],
              ["fanout-per-write", inputs.fanoutPerWrite],
              ["request-cost", inputs.requestCost],
              ["watch-bytes", inputs.watchBytes],
              ["object-sizes", inputs.objectSizes],
            ] as const
          ).map(([id, input]) =>
            // On a phone each is one line until tapped, and asked for only then (nothing is asked before the page knows which it is).
            phone && !opened.has(id) ? (
              <CollapsedSignal key={id} def={panel(id)} onOpen={() => setOpened((was) => new Set(was).add(id))} />
            ) : (
              <PanelCard key={id} def={panel(id)} input={input} markers={markers} ready={signalsReady && phone !== undefined} />
            ),
          )}
        </div>
        <PanelFrame
          id="write-totals"
          title={`Write totals${resource ? ` (${splitResource(resource)[0]} highlighted)` : ""}`}
          description={`Writes in ${formatRange(startMs, endMs)} against the previous range of the same length. Click a resource to drill in.`}
          state={totals}
          chart={false}
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
    </ChartZoomContext>
  );
}
