/**
 * The panel requests the Write load page makes for one view state. The page and the snapshot
 * export both use this list, so a snapshot holds exactly what the page asks for.
 */
import { previousRange } from "../time/range";

export interface ViewState {
  startMs: number;
  endMs: number;
  apiserver?: string;
  resource?: string;
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
  totals: PanelCall;
  /** the previous range of the same length, for the totals table's comparison */
  totalsBefore: PanelCall;
}

export function writeLoadRequests(state: ViewState): WriteLoadCalls {
  const { startMs, endMs, apiserver, resource } = state;
  const whole = { startMs, endMs, apiserver };
  const before = previousRange({ startMs, endMs });
  return {
    writesByResource: { panel: "writes-by-resource", ...whole },
    writesByVerb: resource ? { panel: "writes-by-verb", ...whole, resource } : undefined,
    effectiveWrites: { panel: "effective-writes", ...whole, resource },
    writeErrors: { panel: "write-errors", ...whole, resource },
    leaseRenewals: { panel: "lease-renewals", ...whole },
    watchFanout: { panel: "watch-fanout", ...whole, resource },
    totals: { panel: "write-totals", ...whole },
    totalsBefore: { panel: "write-totals", startMs: before.startMs, endMs: before.endMs, apiserver },
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
