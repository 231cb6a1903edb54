/**
 * Which engine answers the PromQL: Prometheus, VictoriaMetrics (MetricsQL) or Thanos. They agree on what the
 * panels ask except native histograms: MetricsQL has neither them nor histogram_sum/histogram_count/
 * histogram_fraction, and a query naming one fails as a whole, so there the classic series are asked alone.
 * Thanos Query merges HA replicas (asked with dedup=true) and may read downsampled blocks, which the panel says.
 */
import { PromError } from "./errors";
import type { PromClient } from "./types";

export const FLAVORS = ["prometheus", "victoriametrics", "thanos"] as const;
export type Flavor = (typeof FLAVORS)[number];

export const hasNativeHistograms = (flavor: Flavor) => flavor !== "victoriametrics";

/**
 * The coarsest blocks Thanos may answer from (its max_source_resolution): raw samples only (exact, the default), a
 * fixed 5m or 1h, or auto, Thanos's own rule of a fifth of a chart's step (instant queries stay raw).
 */
export const SOURCE_RESOLUTIONS = ["raw", "5m", "1h", "auto"] as const;
export type SourceResolution = (typeof SOURCE_RESOLUTIONS)[number];
const DOWNSAMPLED_SECONDS = [3600, 300] as const;

/** max_source_resolution in seconds for a query: 0 for an instant one or raw, otherwise per the setting. */
export function maxSourceResolutionSeconds(setting: SourceResolution, stepSeconds?: number): number {
  if (setting === "raw") return 0;
  if (setting === "5m") return 300;
  if (setting === "1h") return 3600;
  return stepSeconds === undefined ? 0 : Math.floor(stepSeconds / 5);
}

/**
 * How the engine reads a range selector's window: Prometheus 2 as [t−w, t], Prometheus 3 (and Thanos on its engine)
 * as (t−w, t], which leaves the sample on the left edge out of a rate and extrapolates to the edge instead.
 */
export type WindowSemantics = "closed" | "left-open";

/** Asked of the engine itself, not of its version: a 60 s window over a 15 s subquery holds 5 points closed, 4 left-open. */
export const WINDOW_PROBE = "count_over_time(vector(1)[60s:15s])";

export async function detectWindows(client: PromClient, flavor: Flavor, signal?: AbortSignal): Promise<WindowSemantics | null> {
  // MetricsQL's rate() and increase() start from the last sample before a window, so its figures are already the closed
  // window's; only its subqueries read (t−w, t], which is all the probe would see.
  if (flavor === "victoriametrics") return "closed";
  try {
    const answer = await client.query(WINDOW_PROBE, Math.floor(Date.now() / 60_000) * 60, signal);
    const value = answer.data.resultType === "vector" ? answer.data.result[0]?.value?.[1] : undefined;
    return value === "5" ? "closed" : value === "4" ? "left-open" : null;
  } catch {
    return null;
  }
}

export interface EngineTraits {
  flavor: Flavor;
  windows: WindowSemantics;
  sourceResolution: SourceResolution;
}

/** What is assumed where nothing was asked (tests, the replay's build): Prometheus 2. */
export const CLOSED_PROMETHEUS: EngineTraits = { flavor: "prometheus", windows: "closed", sourceResolution: "raw" };

/**
 * What a chart says of the engine's own semantics: on left-open windows, how its rates are asked (queries.ts
 * counterRate), and on Thanos the deduplicated replicas and the coarsest blocks it may have read.
 */
export function engineInfos(engine: EngineTraits, stepSeconds: number, rates: boolean): string[] {
  const infos: string[] = [];
  if (rates && engine.windows === "left-open")
    infos.push(
      "This engine reads a window as (t−w, t], as Prometheus 3 does, where rate() extrapolates: each rate here is the counter's rise over the window (its value less its value a window before), exact where the scrapes sit on the window's edges; where a counter reset or began within the window, increase() answers for it.",
    );
  if (engine.flavor !== "thanos") return infos;
  const seconds = maxSourceResolutionSeconds(engine.sourceResolution, stepSeconds);
  const coarsest = DOWNSAMPLED_SECONDS.find((s) => s <= seconds);
  infos.push(
    coarsest === undefined
      ? "Thanos: replicas deduplicated; raw samples only."
      : `Thanos: replicas deduplicated; at this step it may answer from blocks downsampled to ${coarsest === 300 ? "5m" : "1h"} ` +
          `(max_source_resolution=${seconds}s), so where raw samples are gone the figures are estimates from ${coarsest === 300 ? "5-minute" : "hourly"} aggregates.`,
  );
  return infos;
}

/**
 * VictoriaMetrics marks every query answer with its own statistics; Thanos Query answers as Prometheus does, but alone
 * lists the stores it reads (/api/v1/stores). Null when the engine did not answer: the panel's own query then says why,
 * and the question is asked again.
 */
export async function detectFlavor(client: PromClient, signal?: AbortSignal): Promise<Flavor | null> {
  try {
    const answer = await client.query("vector(1)", Math.floor(Date.now() / 1000), signal);
    if (answer.servedBy === "victoriametrics") return "victoriametrics";
  } catch {
    return null;
  }
  // Refused (no such endpoint: Prometheus 404, VictoriaMetrics 400) is an answer; no answer at all is asked again.
  return client.thanosStores(signal).then(
    (): Flavor => "thanos",
    (error: unknown): Flavor | null => (PromError.is(error) && error.httpStatus !== undefined && error.httpStatus < 500 ? "prometheus" : null),
  );
}
