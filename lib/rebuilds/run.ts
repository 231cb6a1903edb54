/** Runs one Edge rebuilds panel: detect the profile for the range, build its queries, send them. */
import { CLOSED_PROMETHEUS, engineInfos, hasNativeHistograms, type EngineTraits } from "../promql/flavor";
import type { PromClient } from "../promql/types";
import type { Series } from "../promql/types";
import type { PanelRequest } from "../panels/params";
import { executeQueries, limitSeries, nothingToDraw, panelTimes, planPanel, sentQueries, unique, type PanelResult } from "../panels/run-panel";
import { REBUILD_PROFILES } from "./profiles";
import { countSelector, type DetectedProfile } from "./detect";
import type { RebuildPanelDef, RebuildVars } from "./catalog";

export interface RebuildDeps {
  client: PromClient;
  scrapeIntervalSeconds: number;
  detect: (bounds: { startSeconds: number; endSeconds: number }, signal?: AbortSignal) => Promise<DetectedProfile | null>;
  siteLabel: string;
  hubJobs: string[];
  upstream: { resource: string; group?: string };
  /** which engine answers and how it reads windows (flavor.ts), asked once; Prometheus 2's when not given */
  engine?: (signal?: AbortSignal) => Promise<EngineTraits>;
}

/** Flags quantile series that sit at the top finite bucket, where histogram_quantile can only say "at least". */
export function capWarnings(series: Series[], cap: number | undefined, siteLabel: string): string[] {
  if (cap === undefined) return [];
  const bySeries = new Map<string, { sites: string[]; points: number }>();
  for (const s of series) {
    const atCap = s.points.filter(([, v]) => v !== null && v >= cap - 1e-9).length;
    if (atCap === 0) continue;
    const name = s.labels.series ?? "value";
    const entry = bySeries.get(name) ?? { sites: [], points: 0 };
    entry.sites.push(s.labels[siteLabel] ?? "?");
    entry.points += atCap;
    bySeries.set(name, entry);
  }
  return [...bySeries.entries()].map(
    ([name, { sites, points }]) =>
      `${name} reaches the top finite bucket (${cap} s) at ${sites.sort().join(", ")} (${points} points): there it means "${cap} s or more", not ${cap} s. Read the mean and the slow share instead.`,
  );
}

export async function runRebuildPanel(deps: RebuildDeps, panel: RebuildPanelDef, req: PanelRequest, signal?: AbortSignal): Promise<PanelResult> {
  const plan = planPanel(panel.mode, req, deps.scrapeIntervalSeconds);
  const detected = await deps.detect(plan.bounds, signal);
  const times = panelTimes(panel.mode, plan);
  const base = { panel: panel.id, title: panel.title, unit: panel.unit, ...times };
  if (!detected) {
    const looked = [...new Set(REBUILD_PROFILES.map(countSelector))].join(", ");
    return { data: { ...base, query: "", queries: [], series: [] }, warnings: [], infos: [`No rebuild metrics in this range: looked for ${looked}.`] };
  }
  const engine = (await deps.engine?.(signal)) ?? CLOSED_PROMETHEUS;
  const vars: RebuildVars = {
    detected,
    nativeHistograms: hasNativeHistograms(engine.flavor),
    windows: engine.windows,
    siteLabel: deps.siteLabel,
    windowSeconds: plan.windowSeconds,
    rangeSeconds: plan.rangeSeconds,
    hubJobs: deps.hubJobs,
    upstream: deps.upstream,
  };
  const { queries, infos } = panel.queries(vars);
  const answer = queries.length > 0 ? await executeQueries(deps.client, panel.mode, plan, req, queries, signal) : { series: [], warnings: [], infos: [] };
  const thresholds = panel.thresholds?.(vars) ?? [];
  const capped = panel.capped ? capWarnings(answer.series, detected.buckets.at(-1), deps.siteLabel) : [];
  const limited = limitSeries(answer.series);
  return {
    data: {
      ...base,
      query: queries[0]?.promql ?? "",
      queries: sentQueries(queries),
      series: limited.series,
      profile: { id: detected.profile.id, title: detected.profile.title, reason: detected.reason },
      ...(thresholds.length ? { thresholds } : {}),
      ...(nothingToDraw(queries, answer.series) ? { nothingToDraw: true as const } : {}),
    },
    warnings: unique([...limited.warnings, ...capped, ...answer.warnings]),
    infos: unique([...infos, ...answer.infos, ...(queries.length > 0 ? engineInfos(engine, plan.stepSeconds, panel.mode === "range") : [])]),
  };
}
