/**
 * The Edge rebuilds panels, as data. Every query is built from
 * the detected profile's metric names and the configured site label, through the escaping selector
 * builder. Ids are stable: they appear in URLs, the JSON API and snapshots.
 */
import { counterRate, counterRise, riseInfo, WRITE_VERBS, type NamedQuery, type Unit } from "../panels/queries";
import type { WindowSemantics } from "../promql/flavor";
import { histogramMean, histogramSum, nativeShareAbove } from "../promql/histogram";
import { byClause, escapeRegex, literalAlternation, selector, type Matcher } from "../promql/promql";
import { promDuration } from "../time/duration";
import type { DetectedProfile } from "./detect";
import { inUnits, type MetricRef, type TimingRef } from "./profiles";

export interface RebuildVars {
  detected: DetectedProfile;
  siteLabel: string;
  windowSeconds: number;
  rangeSeconds: number;
  /** hub API server jobs, whose writes to `upstream` the edge rebuilds follow */
  hubJobs: string[];
  upstream: { resource: string; group?: string };
  /** whether the engine has native histograms (flavor.ts): without, only classic series are asked */
  nativeHistograms: boolean;
  /** how the engine reads a rate's window (flavor.ts); closed, Prometheus 2's, when not given */
  windows?: WindowSemantics;
}

export interface RebuildPanelDef {
  id: string;
  title: string;
  description: string;
  unit: Unit;
  mode: "range" | "total";
  queries(vars: RebuildVars): { queries: NamedQuery[]; infos: string[] };
  thresholds?(vars: RebuildVars): { value: number; label: string }[];
  /** points at the top finite bucket are flagged: a quantile there means "at least this" */
  capped?: boolean;
}

const ref = (r: MetricRef, suffix = "", extra: Matcher[] = []) => selector(`${r.metric}${suffix}`, [...r.matchers, ...extra]);
const bySite = (v: RebuildVars, more: string[] = []) => byClause([v.siteLabel, ...more]);
const w = (v: RebuildVars) => promDuration(v.windowSeconds);
const rate = (v: RebuildVars, sel: string, more: string[] = []) => `sum${bySite(v, more)} (${counterRate(sel, v)})`;
const topBucket = (v: RebuildVars) => v.detected.buckets.at(-1);
const seconds = (s: number) => `${Number(s.toPrecision(6))} s`;
/** Matches a bucket bound whether it is written "10" or "10.0" (Prometheus 3 normalises le). */
const le = (bound: number): Matcher => ({ label: "le", op: "=~", value: `${escapeRegex(String(bound))}(\\.0)?` });

type Duration = NonNullable<RebuildVars["detected"]["profile"]["duration"]>;

/** An expression in the timing's unit, in seconds. */
const inSecondsExpr = (t: TimingRef, expr: string) => (t.secondsPerUnit === undefined ? expr : `(${expr}) * ${t.secondsPerUnit}`);

/**
 * A timing's mean per site, in seconds: its sum over its count, from classic series or a native histogram. `over`
 * turns a selector into its per-site rate or increase.
 */
function timingMean(t: TimingRef, over: (selector: string) => string, v: RebuildVars): string {
  if (t.kind === "summary") return inSecondsExpr(t, `${over(ref(t, "_sum"))} / ${over(ref(t, "_count"))}`);
  return inSecondsExpr(
    t,
    histogramMean(over, (suffix) => ref(t, suffix), v.nativeHistograms),
  );
}

/** A timing's sum per site (the time it took), in seconds, from classic series or a native histogram. */
function timingSum(t: TimingRef, over: (selector: string) => string, v: RebuildVars): string {
  return inSecondsExpr(t, t.kind === "summary" ? over(ref(t, "_sum")) : histogramSum(over, (suffix) => ref(t, suffix), v.nativeHistograms));
}

/**
 * The percentage of rebuilds slower than `bound` seconds, per site: counted from the classic bucket at that bound,
 * or, where only the native form is held, interpolated inside its bucket by histogram_fraction (an estimate).
 */
function slowShare(v: RebuildVars, d: Duration, bound: number, over: (selector: string) => string): string {
  if (v.detected.native) return nativeShareAbove(over, ref(d), inUnits(d, bound));
  return `100 * (1 - ${over(ref(d, "_bucket", [le(inUnits(d, bound))]))} / ${over(ref(d, "_count"))})`;
}

/** The slow-share thresholds a detected histogram answers: its classic bounds (slowThresholds), or 5 s and 10 s from a native one. */
const slowBounds = (v: RebuildVars) => (v.detected.native ? [5, 10] : slowThresholds(v.detected.buckets));

const nativeEstimate = (d: Duration) =>
  `Estimated: ${d.metric} is held here as a native histogram, whose bucket bounds are not 5 s and 10 s; histogram_fraction interpolates inside the bucket that holds each.`;

/** Queries for a panel that needs the rebuild duration metric; a profile without one gets an info instead. */
function withDuration(build: (d: Duration, v: RebuildVars) => { queries: NamedQuery[]; infos: string[] }) {
  return (v: RebuildVars) => {
    const d = v.detected.profile.duration;
    return d ? build(d, v) : { queries: [], infos: [`${v.detected.profile.title} exposes no rebuild duration metric.`] };
  };
}

/** The slow-share thresholds this histogram can answer exactly: 5 s and 10 s when they are bucket bounds, else the top bound. */
export function slowThresholds(buckets: number[]): number[] {
  const wanted = [5, 10].filter((b) => buckets.includes(b));
  return wanted.length > 0 ? wanted : buckets.slice(-1);
}

export const REBUILD_PANELS: readonly RebuildPanelDef[] = [
  {
    id: "rebuild-rate",
    title: "Rebuilds per hour",
    description: "Full configuration rebuilds per hour at each site.",
    unit: "rebuilds/h",
    mode: "range",
    queries: (v) => ({
      queries: [{ promql: `${rate(v, ref(v.detected.profile.count))} * 3600` }],
      infos: v.detected.profile.caveat ? [v.detected.profile.caveat] : [],
    }),
  },
  {
    id: "rebuild-duration-mean",
    title: "Mean rebuild duration",
    description: "Time per rebuild, exact: the duration sum divided by the count over each window (not a quantile estimate).",
    unit: "s",
    mode: "range",
    queries: withDuration((d, v) => ({ queries: [{ promql: timingMean(d, (sel) => rate(v, sel), v) }], infos: [] })),
  },
  {
    id: "rebuild-slow-share",
    title: "Share of slow rebuilds",
    description: "Percentage of rebuilds slower than 5 s and than 10 s, from bucket counts: exact, unlike a quantile near the top bucket.",
    unit: "%",
    mode: "range",
    queries: withDuration((d, v) => {
      const bounds = d.kind === "histogram" ? slowBounds(v) : [];
      if (bounds.length === 0) return { queries: [], infos: [`${d.metric} has no buckets, so slow shares cannot be counted.`] };
      return {
        queries: bounds.map((bound) => ({ name: `over ${seconds(bound)}`, promql: slowShare(v, d, bound, (sel) => rate(v, sel)) })),
        infos: v.detected.native ? [nativeEstimate(d)] : [],
      };
    }),
  },
  {
    id: "rebuild-duration-quantiles",
    title: "Rebuild duration p50 / p90 / p99",
    description:
      'Quantiles estimated from histogram buckets. A value at the top finite bucket means "at least that long": use the mean and the slow share for numbers.',
    unit: "s",
    mode: "range",
    capped: true,
    queries: withDuration((d, v) => {
      if (d.kind !== "histogram") return { queries: [], infos: [`${d.metric} is a summary: no buckets to estimate quantiles from.`] };
      return {
        queries: [0.5, 0.9, 0.99].map((q) => ({
          name: `p${Math.round(q * 100)}`,
          promql: inSecondsExpr(d, `histogram_quantile(${q}, ${rate(v, ref(d, "_bucket"), ["le"])}) or histogram_quantile(${q}, ${rate(v, ref(d))})`),
        })),
        infos: [],
      };
    }),
    thresholds: (v) => {
      const top = topBucket(v);
      return top === undefined ? [] : [{ value: top, label: `top bucket: ≥ ${seconds(top)}` }];
    },
  },
  {
    id: "rebuild-busy",
    title: "Time spent rebuilding",
    description: "Seconds of rebuilding per second at each site. The rebuild loop runs one rebuild at a time, so 1.0 means it never rests.",
    unit: "s/s",
    mode: "range",
    queries: withDuration((d, v) => ({ queries: [{ promql: timingSum(d, (sel) => rate(v, sel), v) }], infos: [] })),
    thresholds: () => [{ value: 1, label: "saturated" }],
  },
  {
    id: "rebuild-backlog",
    title: "Rebuild backlog",
    description: "Most updates waiting while a rebuild ran, per window (highest replica). Above 0 the loop no longer keeps up and coalesces updates.",
    unit: "updates",
    mode: "range",
    queries: (v) => {
      const b = v.detected.profile.backlog;
      if (!b) return { queries: [], infos: [`${v.detected.profile.title} exposes no backlog gauge.`] };
      // The gauge is sampled at scrapes; the window's maximum keeps short queues visible at coarse steps.
      return { queries: [{ promql: `max${bySite(v)} (max_over_time(${ref(b)}[${w(v)}]))` }], infos: [] };
    },
  },
  {
    id: "rebuild-stages",
    title: "Mean time per stage",
    description:
      "The stages of a rebuild that the gateway times on its own (debounce, queue, translation, push), each as its exact mean: sum over count per window.",
    unit: "s",
    mode: "range",
    queries: (v) => {
      const stages = v.detected.profile.stages ?? [];
      if (stages.length === 0) return { queries: [], infos: [`${v.detected.profile.title} times no stage of its rebuilds on its own.`] };
      return {
        queries: stages.map((stage) => ({
          name: stage.name,
          promql: timingMean(stage, (sel) => rate(v, sel), v),
          whenEmpty: `${stage.metric} has no data in this range.`,
        })),
        infos: [],
      };
    },
  },
  {
    id: "rebuild-breakdown",
    title: "Rebuilds by type",
    description:
      "What the rebuilds were, or what set them off, split by the gateway's own label (Istio's push triggers and xDS types, kgateway's translators), per hour.",
    unit: "events/h",
    mode: "range",
    queries: (v) => {
      const breakdowns = v.detected.profile.breakdowns ?? [];
      if (breakdowns.length === 0) return { queries: [], infos: [`${v.detected.profile.title} does not split its rebuilds by type.`] };
      return {
        queries: breakdowns.map((b) => ({
          name: b.name,
          promql: `label_replace(${rate(v, ref(b), [b.by])} * 3600, "part", "$1", ${JSON.stringify(b.by)}, "(.*)")`,
          whenEmpty: `${b.metric} has no data in this range.`,
        })),
        infos: [],
      };
    },
  },
  {
    id: "propagation",
    title: "Propagated updates (Karmada)",
    description: 'Updates Karmada pushed to each member cluster per hour, by kind and result: "unchanged" is propagation that changed nothing.',
    unit: "updates/h",
    mode: "range",
    queries: (v) => ({
      queries: [
        {
          promql: `sum by (member_cluster, kind, operationResult) (${counterRate(selector("update_resource_to_cluster", [{ label: "result", op: "=", value: "success" }]), v)}) * 3600`,
        },
      ],
      infos: [],
    }),
  },
  {
    id: "rebuild-amplification",
    title: "Rebuilds per upstream write",
    description: "Each site's rebuilds divided by the hub's successful writes to the upstream resource: how much edge work one write buys.",
    unit: "rebuilds/write",
    mode: "range",
    queries: (v) => {
      if (v.hubJobs.length === 0) {
        return { queries: [], infos: ["List the hub API servers under apiservers.hub in the configuration to see rebuilds per upstream write."] };
      }
      const writes = selector("apiserver_request_total", [
        { label: "job", op: "=~", value: literalAlternation(v.hubJobs) },
        { label: "resource", op: "=", value: v.upstream.resource },
        ...(v.upstream.group !== undefined ? [{ label: "group", op: "=" as const, value: v.upstream.group }] : []),
        { label: "verb", op: "=~", value: WRITE_VERBS.join("|") },
        { label: "code", op: "=~", value: "2.." },
      ]);
      return {
        queries: [{ promql: `${rate(v, ref(v.detected.profile.count))} / on() group_left() sum(${counterRate(writes, v)})` }],
        infos: [`Upstream writes: ${v.upstream.resource}${v.upstream.group ? `.${v.upstream.group}` : ""} on ${v.hubJobs.join(", ")}.`],
      };
    },
  },
  {
    id: "rebuild-summary",
    title: "Rebuild summary",
    description: "Per site over the whole range: rebuilds, exact mean duration, share over the top threshold, and time spent rebuilding.",
    unit: "per site",
    mode: "total",
    queries: (v) => {
      const count = ref(v.detected.profile.count);
      const inc = (sel: string) => `sum${bySite(v)} (${counterRise(sel, v.rangeSeconds, v.windows)})`;
      const queries: NamedQuery[] = [{ name: "rebuilds", promql: inc(count) }];
      const d = v.detected.profile.duration;
      const infos = [v.windows === "left-open" ? riseInfo("Totals", "range") : "Totals are increase(), which Prometheus extrapolates to the range edges."];
      if (d) {
        queries.push({ name: "mean s", promql: timingMean(d, inc, v) });
        queries.push({ name: "busy s/s", promql: `(${timingSum(d, inc, v)}) / ${v.rangeSeconds}` });
        const slow = d.kind === "histogram" ? slowBounds(v).at(-1) : undefined;
        if (slow !== undefined) queries.push({ name: `over ${seconds(slow)} %`, promql: slowShare(v, d, slow, inc) });
        if (slow !== undefined && v.detected.native) infos.push(nativeEstimate(d));
      }
      return { queries, infos };
    },
  },
];

export function findRebuildPanel(id: string): RebuildPanelDef | undefined {
  return REBUILD_PANELS.find((p) => p.id === id);
}
