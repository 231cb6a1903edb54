/** What the committed replay snapshot holds: its ranges, API servers and drill-downs. */
import { distinctCalls, type PanelCall, type ViewState } from "../panels/write-load-requests";
import { rebuildCalls } from "../rebuilds/requests";
import { compareArgs, compareWindows, parseCompareArgs } from "../compare/compare";
import { comparePresets, counterPresets } from "../compare/catalog";
import type { Snapshot } from "../snapshot/format/schema";
import type { ReplayParams } from "./params";
import { HUB_JOB, PROJECT_JOB } from "./types";

export const REPLAY_TITLE = "Connector status churn, 9–13 September 2026 (replay)";
export const REPLAY_DESCRIPTION =
  "A reconstruction of the incident in which every Connector status write made every edge site rebuild its whole gateway configuration (the Connector churn write-up). " +
  "The numbers come from a seeded simulation of the real objects and controllers, backfilled into a real Prometheus and exported by Churnscope itself.";

export const REPLAY_APISERVERS: Snapshot["apiservers"] = [
  { job: PROJECT_JOB, role: "project" },
  { job: HUB_JOB, role: "hub" },
];

const DRILL_DOWNS = ["connectors.networking.datumapis.com", "leases.coordination.k8s.io"];

/** The replay opens on Connector writes: project status PUTs and hub PUTs side by side. */
export const REPLAY_INITIAL_VIEW = (params: ReplayParams) => ({ resource: DRILL_DOWNS[0], atMs: params.onsetMs });

export function replayRanges(params: ReplayParams): Snapshot["ranges"] {
  const day = Date.UTC(2026, 8, 11);
  return [
    { startMs: params.startMs, endMs: params.endMs, label: "Whole incident" },
    { startMs: day, endMs: day + 86_400_000, label: "Onset day" },
    { startMs: params.onsetMs - 2 * 3_600_000 - 12 * 60_000, endMs: params.onsetMs + 2 * 3_600_000 - 12 * 60_000, label: "Onset ±2 h" },
  ].filter((r) => r.startMs >= params.startMs && r.endMs <= params.endMs);
}

/** Every panel call the replay answers: every page and range, before/after the onset where it falls inside. */
export function replayCalls(params: ReplayParams): PanelCall[] {
  const rebuilds = replayRanges(params).flatMap(({ startMs, endMs }) => rebuildCalls({ startMs, endMs, atMs: params.onsetMs }));
  return [...distinctCalls(replayStates(params)), ...rebuilds, ...replayComparisons(params)];
}

/** The Connector churn write-up's two tables, for every range. */
export function replayComparisons(params: ReplayParams): PanelCall[] {
  const presets = comparePresets(counterPresets({ project: [PROJECT_JOB], hub: [HUB_JOB] }));
  return replayRanges(params).flatMap(({ startMs, endMs }) =>
    presets
      .map((p) => parseCompareArgs({ ...p }))
      .filter((args) => compareWindows(startMs, endMs, args.windowMs).count > 0)
      .map((args) => ({ panel: "compare", startMs, endMs, args: compareArgs(args) })),
  );
}

export function replayStates(params: ReplayParams): ViewState[] {
  const states: ViewState[] = [];
  for (const { startMs, endMs } of replayRanges(params)) {
    for (const apiserver of [undefined, PROJECT_JOB, HUB_JOB]) {
      states.push({ startMs, endMs, apiserver });
      for (const resource of DRILL_DOWNS) {
        if (apiserver === HUB_JOB && !resource.startsWith("connectors")) continue;
        states.push({ startMs, endMs, apiserver, resource });
      }
    }
  }
  return states;
}
