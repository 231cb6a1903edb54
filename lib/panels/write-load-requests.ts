/**
 * The panel requests the Write load page makes for one view state. The page and the snapshot
 * export both use this list, so a snapshot holds exactly what the page asks for.
 */
import type { SnapshotInfo } from "../snapshot/format/schema";
import { linkRange } from "../snapshot/format/view-range";
import { previousRange } from "../time/range";
import { apiserversUrl, markersUrl, panelUrl, type ChartWidths, type PanelQueryInput } from "./panel-url";

export interface ViewState {
  startMs: number;
  endMs: number;
  apiserver?: string;
  resource?: string;
  /** count requests sent with ?dryRun too (the page leaves them out by default) */
  includeDryRun?: boolean;
}

export interface PanelCall {
  panel: string;
  startMs: number;
  endMs: number;
  apiserver?: string;
  resource?: string;
  /** further parameters of panels that take them (the compare view's counters and window) */
  args?: Record<string, string>;
}

export interface WriteLoadCalls {
  writesByResource: PanelCall;
  /** only with a resource selected */
  writesByVerb?: PanelCall;
  effectiveWrites: PanelCall;
  writeErrors: PanelCall;
  leaseRenewals: PanelCall;
  watchFanout: PanelCall;
  noopEvidence: PanelCall;
  requestCost: PanelCall;
  fanoutPerWrite: PanelCall;
  watchBytes: PanelCall;
  objectSizes: PanelCall;
  totals: PanelCall;
  /** the previous range of the same length, for the totals table's comparison */
  totalsBefore: PanelCall;
}

/**
 * The signal panels, below the write rates: the page asks for them once the write rates have answered,
 * so the charts an SRE reads first are not kept waiting behind the ones further down.
 */
export const SIGNAL_CALLS = ["noopEvidence", "requestCost", "fanoutPerWrite", "watchBytes", "objectSizes"] as const satisfies readonly (keyof WriteLoadCalls)[];

export function writeLoadRequests(state: ViewState): WriteLoadCalls {
  const { startMs, endMs, apiserver, resource } = state;
  const whole = { startMs, endMs, apiserver };
  // Only the panels that count requests take the dry-run choice.
  const requests = state.includeDryRun ? { args: { dryRun: "include" } } : {};
  const before = previousRange({ startMs, endMs });
  return {
    // With the selected resource: it is kept as its own series (see topNWithOther).
    writesByResource: { panel: "writes-by-resource", ...whole, resource, ...requests },
    writesByVerb: resource ? { panel: "writes-by-verb", ...whole, resource, ...requests } : undefined,
    effectiveWrites: { panel: "effective-writes", ...whole, resource, ...requests },
    writeErrors: { panel: "write-errors", ...whole, resource, ...requests },
    leaseRenewals: { panel: "lease-renewals", ...whole, ...requests },
    watchFanout: { panel: "watch-fanout", ...whole, resource },
    noopEvidence: { panel: "noop-evidence", ...whole, resource, ...requests },
    requestCost: { panel: "request-cost", ...whole },
    fanoutPerWrite: { panel: "fanout-per-write", ...whole, resource, ...requests },
    watchBytes: { panel: "watch-bytes", ...whole, resource },
    objectSizes: { panel: "object-sizes", ...whole, resource },
    totals: { panel: "write-totals", ...whole, ...requests },
    totalsBefore: { panel: "write-totals", startMs: before.startMs, endMs: before.endMs, apiserver, ...requests },
  };
}

export function panelCallKey(call: PanelCall): string {
  const key: unknown[] = [call.panel, call.startMs, call.endMs, call.apiserver ?? "", call.resource ?? ""];
  if (call.args) key.push(Object.entries(call.args).sort(([x], [y]) => (x < y ? -1 : 1)));
  return JSON.stringify(key);
}

/** Every distinct call of the given states, in a stable order. */
export function distinctCalls(states: ViewState[]): PanelCall[] {
  const out = new Map<string, PanelCall>();
  for (const state of states) {
    for (const call of Object.values(writeLoadRequests(state))) if (call) out.set(panelCallKey(call), call);
  }
  return [...out.values()];
}

/** Points the totals table asks for: it reads one total per series, not a shape. */
const TOTALS_WIDTH = 1000;

/**
 * The page's requests as it sends them with charts `widths` wide (`chartWidths` of the page's
 * width): the first chart spans the page, the others half of it. The page and the preload script
 * both take them from here.
 */
export function writeLoadInputs(calls: WriteLoadCalls, widths: ChartWidths, snapshot?: string): { [K in keyof WriteLoadCalls]: PanelQueryInput } {
  const { full, half } = widths;
  const input = (call: PanelCall, width: number): PanelQueryInput => ({ ...call, width, snapshot });
  return {
    writesByResource: input(calls.writesByResource, full),
    writesByVerb: calls.writesByVerb && input(calls.writesByVerb, half),
    effectiveWrites: input(calls.effectiveWrites, half),
    writeErrors: input(calls.writeErrors, half),
    leaseRenewals: input(calls.leaseRenewals, half),
    watchFanout: input(calls.watchFanout, half),
    noopEvidence: input(calls.noopEvidence, half),
    requestCost: input(calls.requestCost, half),
    fanoutPerWrite: input(calls.fanoutPerWrite, half),
    watchBytes: input(calls.watchBytes, half),
    objectSizes: input(calls.objectSizes, half),
    totals: input(calls.totals, TOTALS_WIDTH),
    totalsBefore: input(calls.totalsBefore, TOTALS_WIDTH),
  };
}

/**
 * The URLs a Write load page asks for first with its link's parameters, with "now" at `nowMs`, when its
 * charts are `widths` wide (WIDTH_SLOTS: the templates the preload script fills in): all but the
 * signal panels. None for a range the page refuses.
 */
export function writeLoadPreloads(
  search: { from?: string; to?: string; apiserver?: string; resource?: string; dryRun?: string },
  widths: ChartWidths,
  nowMs: number,
  snapshot?: SnapshotInfo,
): string[] {
  const range = linkRange(search.from, search.to, nowMs, snapshot);
  if (!range) return [];
  const calls = writeLoadRequests({
    ...range,
    apiserver: search.apiserver || undefined,
    resource: search.resource || undefined,
    includeDryRun: search.dryRun === "include",
  });
  const later = new Set<string>(SIGNAL_CALLS);
  const panels = Object.entries(writeLoadInputs(calls, widths, snapshot?.id)).flatMap(([name, input]) => (input && !later.has(name) ? [panelUrl(input)] : []));
  // The markers on every chart, and the API server list (a snapshot carries its own).
  return [...panels, markersUrl(range.startMs, range.endMs, snapshot?.id), ...(snapshot ? [] : [apiserversUrl(range.startMs, range.endMs)])];
}
