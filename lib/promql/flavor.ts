/**
 * Which engine answers the PromQL: Prometheus, VictoriaMetrics (MetricsQL) or Thanos. They agree on what the
 * panels ask except native histograms: MetricsQL has neither them nor histogram_sum/histogram_count/
 * histogram_fraction, and a query naming one fails as a whole, so there the classic series are asked alone.
 */
import type { PromClient } from "./types";

export const FLAVORS = ["prometheus", "victoriametrics", "thanos"] as const;
export type Flavor = (typeof FLAVORS)[number];

export const hasNativeHistograms = (flavor: Flavor) => flavor !== "victoriametrics";

/**
 * VictoriaMetrics marks every query answer with its own statistics. Thanos answers as Prometheus does, so it is never
 * detected, only configured (prometheus.flavor: thanos). Null when the engine did not answer: the panel's own query
 * then says why, and the question is asked again.
 */
export async function detectFlavor(client: PromClient, signal?: AbortSignal): Promise<Flavor | null> {
  try {
    const answer = await client.query("vector(1)", Math.floor(Date.now() / 1000), signal);
    return answer.servedBy === "victoriametrics" ? "victoriametrics" : "prometheus";
  } catch {
    return null;
  }
}
