/**
 * Rebuild metric profiles: which metric families count an edge gateway's full configuration
 * rebuilds and time them, per gateway implementation. The dashboard
 * detects the profile from what Prometheus holds, in this order, unless the config names one.
 */
import type { Matcher } from "../promql/promql";

export type RebuildProfileId = "envoy-gateway" | "envoy-gateway-legacy" | "nso-extension" | "contour" | "istio";

export interface MetricRef {
  metric: string;
  matchers: Matcher[];
}

export interface RebuildProfile {
  id: RebuildProfileId;
  title: string;
  /** a counter with one increment per rebuild */
  count: MetricRef;
  /** a histogram (with _bucket) or a summary (only _sum/_count) timing each rebuild */
  duration?: MetricRef & { kind: "histogram" | "summary" };
  /** a gauge of updates waiting for the rebuild loop */
  backlog?: MetricRef;
  /** what one count means, when it is not exactly one full rebuild */
  caveat?: string;
}

const xds = (runner: string): Matcher[] => [
  { label: "runner", op: "=", value: runner },
  { label: "message", op: "=", value: "xds-ir" },
];

export const REBUILD_PROFILES: readonly RebuildProfile[] = [
  {
    id: "envoy-gateway",
    title: "Envoy Gateway ≥ 1.5 (xds runner)",
    count: { metric: "watchable_subscribe_total", matchers: [...xds("xds"), { label: "status", op: "=", value: "success" }] },
    duration: { metric: "watchable_subscribe_duration_seconds", matchers: xds("xds"), kind: "histogram" },
    backlog: { metric: "watchable_depth", matchers: xds("xds") },
  },
  {
    id: "envoy-gateway-legacy",
    title: "Envoy Gateway < 1.5 (xds-translator runner)",
    count: { metric: "watchable_subscribe_total", matchers: [...xds("xds-translator"), { label: "status", op: "=", value: "success" }] },
    duration: { metric: "watchable_subscribe_duration_seconds", matchers: xds("xds-translator"), kind: "histogram" },
    backlog: { metric: "watchable_depth", matchers: xds("xds-translator") },
  },
  {
    id: "nso-extension",
    title: "NSO extension server (PostTranslateModify hook)",
    count: { metric: "nso_extension_hook_calls_total", matchers: [] },
    duration: { metric: "nso_extension_hook_duration_seconds", matchers: [], kind: "histogram" },
    caveat: "The hook's time is the extension server's share of each rebuild, not the whole rebuild.",
  },
  {
    id: "contour",
    title: "Contour (DAG rebuilds)",
    count: { metric: "contour_dagrebuild_total", matchers: [] },
    duration: { metric: "contour_dagrebuild_seconds", matchers: [], kind: "summary" },
    caveat: "contour_dagrebuild_seconds is a summary: the mean is exact, but there are no buckets for slow shares.",
  },
  {
    id: "istio",
    title: "Istio (istiod xDS pushes)",
    count: { metric: "pilot_xds_pushes", matchers: [] },
    duration: { metric: "pilot_proxy_convergence_time", matchers: [], kind: "histogram" },
    caveat: "Istio counts pushes per proxy and xDS type, not whole-configuration rebuilds; convergence time is from change to push.",
  },
];

export function findRebuildProfile(id: string): RebuildProfile | undefined {
  return REBUILD_PROFILES.find((p) => p.id === id);
}
