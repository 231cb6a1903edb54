/**
 * Rebuild metric profiles: which metric families count an edge gateway's full configuration
 * rebuilds and time them, per gateway implementation. The dashboard
 * detects the profile from what Prometheus holds, in this order, unless the config names one.
 */
import type { Matcher } from "../promql/promql";

export const REBUILD_PROFILE_IDS = ["envoy-gateway", "envoy-gateway-legacy", "nso-extension", "contour", "istio", "kgateway", "nginx-gateway-fabric"] as const;
export type RebuildProfileId = (typeof REBUILD_PROFILE_IDS)[number];

export interface MetricRef {
  metric: string;
  matchers: Matcher[];
}

/**
 * A timing family: a histogram (with _bucket) or a summary (only _sum/_count, so a mean and never a
 * quantile), in seconds unless it says otherwise.
 */
export interface TimingRef extends MetricRef {
  kind: "histogram" | "summary";
  /** seconds per unit of the metric: 0.001 for one in milliseconds */
  secondsPerUnit?: number;
}

export interface RebuildProfile {
  id: RebuildProfileId;
  title: string;
  /** a counter with one increment per rebuild */
  count: MetricRef;
  /** times each rebuild */
  duration?: TimingRef;
  /** the stages of a rebuild that are timed on their own, by name */
  stages?: (TimingRef & { name: string })[];
  /** counters that split rebuilds (or what set them off) by one label, per hour */
  breakdowns?: (MetricRef & { name: string; by: string })[];
  /** a gauge of updates waiting for the rebuild loop */
  backlog?: MetricRef;
  /** what one count means, when it is not exactly one full rebuild */
  caveat?: string;
}

const xds = (runner: string): Matcher[] => [
  { label: "runner", op: "=", value: runner },
  { label: "message", op: "=", value: "xds-ir" },
];

/** Envoy Gateway's pipeline: the gateway-api runner translates the provider's resources, then the xDS runner the IR. */
const egStages = (runner: string): RebuildProfile["stages"] => [
  {
    name: "Gateway API translation",
    metric: "watchable_subscribe_duration_seconds",
    matchers: [
      { label: "runner", op: "=", value: "gateway-api" },
      { label: "message", op: "=", value: "provider-resources" },
    ],
    kind: "histogram",
  },
  { name: "xDS translation", metric: "watchable_subscribe_duration_seconds", matchers: xds(runner), kind: "histogram" },
];

export const REBUILD_PROFILES: readonly RebuildProfile[] = [
  {
    id: "envoy-gateway",
    title: "Envoy Gateway ≥ 1.5 (xds runner)",
    count: { metric: "watchable_subscribe_total", matchers: [...xds("xds"), { label: "status", op: "=", value: "success" }] },
    duration: { metric: "watchable_subscribe_duration_seconds", matchers: xds("xds"), kind: "histogram" },
    backlog: { metric: "watchable_depth", matchers: xds("xds") },
    stages: egStages("xds"),
  },
  {
    id: "envoy-gateway-legacy",
    title: "Envoy Gateway < 1.5 (xds-translator runner)",
    count: { metric: "watchable_subscribe_total", matchers: [...xds("xds-translator"), { label: "status", op: "=", value: "success" }] },
    duration: { metric: "watchable_subscribe_duration_seconds", matchers: xds("xds-translator"), kind: "histogram" },
    backlog: { metric: "watchable_depth", matchers: xds("xds-translator") },
    stages: egStages("xds-translator"),
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
    stages: [
      { name: "DAG rebuild", metric: "contour_dagrebuild_seconds", matchers: [], kind: "summary" },
      { name: "cache handler update", metric: "contour_cachehandler_onupdate_duration_seconds", matchers: [], kind: "summary" },
    ],
    caveat: "Contour's timings are summaries: their means are exact, but there are no buckets for slow shares or quantiles.",
  },
  {
    id: "istio",
    title: "Istio (istiod xDS pushes)",
    count: { metric: "pilot_xds_pushes", matchers: [] },
    duration: { metric: "pilot_proxy_convergence_time", matchers: [], kind: "histogram" },
    stages: [
      { name: "debounce", metric: "pilot_debounce_time", matchers: [], kind: "histogram" },
      { name: "proxy queue", metric: "pilot_proxy_queue_time", matchers: [], kind: "histogram" },
      { name: "xDS push", metric: "pilot_xds_push_time", matchers: [], kind: "histogram" },
    ],
    breakdowns: [
      { name: "push triggers", metric: "pilot_push_triggers", matchers: [], by: "type" },
      { name: "xDS pushes", metric: "pilot_xds_pushes", matchers: [], by: "type" },
    ],
    caveat: "Istio counts pushes per proxy and xDS type, not whole-configuration rebuilds; convergence time is from change to push.",
  },
  {
    id: "kgateway",
    title: "kgateway (xDS snapshot syncs)",
    count: { metric: "kgateway_xds_snapshot_syncs_total", matchers: [] },
    duration: { metric: "kgateway_xds_snapshot_sync_duration_seconds", matchers: [], kind: "histogram" },
    stages: [
      { name: "translation", metric: "kgateway_translator_translation_duration_seconds", matchers: [], kind: "histogram" },
      { name: "xDS snapshot sync", metric: "kgateway_xds_snapshot_sync_duration_seconds", matchers: [], kind: "histogram" },
    ],
    breakdowns: [
      { name: "translations", metric: "kgateway_translator_translations_total", matchers: [{ label: "result", op: "=", value: "success" }], by: "translator" },
    ],
    caveat: "kgateway counts an xDS snapshot sync per gateway; its duration runs from a resource's change to the synced snapshot.",
  },
  {
    id: "nginx-gateway-fabric",
    title: "NGINX Gateway Fabric 2.x (event batches)",
    count: { metric: "nginx_gateway_fabric_event_batch_processing_milliseconds_count", matchers: [] },
    duration: { metric: "nginx_gateway_fabric_event_batch_processing_milliseconds", matchers: [], kind: "histogram", secondsPerUnit: 0.001 },
    caveat: "NGINX Gateway Fabric 2.x times each batch of Kubernetes events it turns into one configuration (in milliseconds); 2.0 removed its reload metrics.",
  },
];

export function findRebuildProfile(id: string): RebuildProfile | undefined {
  return REBUILD_PROFILES.find((p) => p.id === id);
}

/** A value of a timing family in seconds (bucket bounds read as the exporter wrote them). */
export const inSeconds = (t: TimingRef, value: number) => Number((value * (t.secondsPerUnit ?? 1)).toPrecision(12));
/** A bound in seconds as the timing family writes it. */
export const inUnits = (t: TimingRef, seconds: number) => Number((seconds / (t.secondsPerUnit ?? 1)).toPrecision(12));
