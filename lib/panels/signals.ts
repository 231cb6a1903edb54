/**
 * The Write load panels that read what each layer counts besides requests: the writes that changed
 * nothing by each layer's own count, what one write costs in watchers, seats and bytes, and how
 * large the objects and write bodies are. Each line says which metric it reads; a layer that is
 * not scraped is named under the panel, never shown as zero.
 */
import { histogramSum } from "../promql/histogram";
import { selector, type Matcher } from "../promql/promql";
import { by, counterRate, meanOf, m, perReplica, rateWindow as w, storableWrites, writes, type NamedQuery, type PanelDef, type PanelVars } from "./queries";
import { storageResource } from "./resource-labels";

const job = (vars: PanelVars) => m("job", "=", vars.job);
const ofResource = (vars: PanelVars) => [job(vars), m("resource", "=", vars.resource), m("group", "=", vars.group)];

/** Consumers' own counts of updates they skipped because nothing changed; they run outside the API servers. */
const CONSUMER_NOOPS: { name: string; metric: string; matchers: Matcher[] }[] = [
  { name: "Contour: status updates skipped as unchanged", metric: "contour_status_update_noop_total", matchers: [] },
  { name: "Envoy Gateway: status updates with no action", metric: "status_update_total", matchers: [{ label: "status", op: "=", value: "no_action" }] },
  {
    name: "Karmada: propagations that changed nothing",
    metric: "update_resource_to_cluster",
    matchers: [{ label: "operationResult", op: "=", value: "unchanged" }],
  },
  {
    name: "Cilium: watch events equal to the cached object",
    metric: "cilium_kubernetes_events_received_total",
    matchers: [{ label: "equal", op: "=", value: "true" }],
  },
];

function noopEvidence(vars: PanelVars): { queries: NamedQuery[]; infos: string[] } {
  const equal = [job(vars), m("code_path", "=", "equal_objects")];
  const comparisons = "apiserver_request_timestamp_comparison_time";
  const queries: NamedQuery[] = [
    storableWrites(vars),
    {
      name: "stored changes (storage events, one replica)",
      promql: perReplica(vars, selector("apiserver_storage_events_received_total", [job(vars), ...storageResource(vars)])),
      whenEmpty: "apiserver_storage_events_received_total (Kubernetes 1.30+) is not scraped here, so stored changes are not shown.",
    },
    {
      name: "managedFields-only updates (reverted; whole API server)",
      // The equal_objects series appears at the first such update; until then the family's other code paths say it counted none.
      promql: [
        `sum(${counterRate(selector(`${comparisons}_count`, equal), vars)})`,
        vars.nativeHistograms ? `histogram_count(sum(rate(${selector(comparisons, equal)}[${w(vars)}])))` : "",
        `0 * sum(${counterRate(selector(`${comparisons}_count`, [job(vars)]), vars)})`,
        vars.nativeHistograms ? `0 * histogram_count(sum(rate(${selector(comparisons, [job(vars)])}[${w(vars)}])))` : "",
      ]
        .filter(Boolean)
        .join(" or "),
      whenEmpty: `${comparisons} is not scraped here.`,
    },
    ...CONSUMER_NOOPS.map((c) => ({ name: c.name, promql: `sum(${counterRate(selector(c.metric, c.matchers), vars)})` })),
  ];
  const infos = vars.resource
    ? ["The managedFields comparison and the consumers' counters have no resource label: their lines are for everything they watch."]
    : [];
  return { queries, infos };
}

const WATCH_EVENTS_BY_KIND = "This API server labels watch events by kind (Kubernetes ≤ 1.33)";

export const SIGNAL_PANELS: readonly PanelDef[] = [
  {
    id: "noop-evidence",
    title: "Writes that changed nothing, by each layer's count",
    description:
      "Successful API writes beside what each layer counts itself: the changes etcd really stored (1.36 storage events, one replica), updates whose only change was managedFields " +
      "timestamps (the API server reverts them), and the updates consumers skipped as unchanged (Contour, Envoy Gateway, Karmada, Cilium), wherever they are scraped.",
    unit: "writes/s",
    mode: "range",
    chart: "lines",
    needsResource: false,
    estimate:
      "no-op writes ≈ API writes (2xx) − stored changes. API writes leave out access and token reviews and TokenRequests, which are answered without storing anything. " +
      "The managedFields line is a count the API server keeps; each consumer line counts that consumer's own skipped updates, which need not be writes to this API server.",
    queries: noopEvidence,
  },
  {
    id: "request-cost",
    title: "Cost per mutating request",
    description:
      "Mean watchers notified per mutating request (apiserver_flowcontrol_watch_count_samples) and mean API Priority and Fairness seats per request (work_estimated_seats), " +
      "by flow schema: what one write of each client class costs the API server.",
    unit: "per request",
    mode: "range",
    chart: "lines",
    needsResource: false,
    largest: 12,
    queries: (vars) => ({
      queries: [
        { name: "watchers notified", metric: "apiserver_flowcontrol_watch_count_samples" },
        { name: "seats", metric: "apiserver_flowcontrol_work_estimated_seats" },
      ].map((h) => ({
        name: h.name,
        promql: meanOf(vars, h.metric, [job(vars)], ["priority_level", "flow_schema"]),
        whenEmpty: `${h.metric} is not scraped here.`,
      })),
      infos: [],
    }),
  },
  {
    id: "fanout-per-write",
    title: "Watch events per write",
    description:
      "Watch events sent per successful write of each resource: about the number of watchers each write reached (writes that changed nothing send none). " +
      "Watchers × writes is the Watch fan-out chart.",
    unit: "events/write",
    mode: "range",
    chart: "lines",
    needsResource: false,
    largest: 10,
    queries: (vars) => {
      if (vars.labelSets.watchEvents === "kind") return { queries: [], infos: [`${WATCH_EVENTS_BY_KIND}, so they cannot be matched to a resource's writes.`] };
      const events = `sum${by(vars, ["group", "resource"])} (${counterRate(selector("apiserver_watch_events_total", ofResource(vars)), vars)})`;
      const written = `sum${by(vars, ["group", "resource"])} (${counterRate(writes(vars, [m("code", "=~", "2..")]), vars)})`;
      return { queries: [{ promql: `${events} / ${written}`, whenEmpty: "apiserver_watch_events_total is not scraped here." }], infos: [] };
    },
  },
  {
    id: "watch-bytes",
    title: "Watch bytes sent",
    description: "Bytes of watch events sent to all watchers per second, by resource (apiserver_watch_events_sizes): the network cost of fan-out.",
    unit: "B/s",
    mode: "range",
    chart: "stacked",
    needsResource: false,
    topN: 10,
    queries: (vars) => {
      const kind = vars.labelSets.watchEvents === "kind";
      const matchers = kind ? [job(vars)] : ofResource(vars);
      const grouping = by(vars, kind ? ["group", "kind"] : ["group", "resource"]);
      const sizes = "apiserver_watch_events_sizes";
      const promql = histogramSum(
        (series) => `sum${grouping} (${counterRate(series, vars)})`,
        (suffix) => selector(`${sizes}${suffix}`, matchers),
        vars.nativeHistograms,
      );
      return {
        queries: [{ promql, whenEmpty: `${sizes} is not scraped here.` }],
        infos: kind && vars.resource ? [`${WATCH_EVENTS_BY_KIND}, so every kind is shown.`] : [],
      };
    },
  },
  {
    id: "object-sizes",
    title: "Object and write sizes",
    description:
      "The API server's estimate of each resource's object size (apiserver_resource_size_estimate_bytes, 1.34+, highest replica) and the mean body of its write requests " +
      "(apiserver_request_body_size_bytes sum over count: its first bucket ends at 50 KB, so no quantile is drawn). The 10 largest.",
    unit: "bytes",
    mode: "range",
    chart: "lines",
    needsResource: false,
    largest: 10,
    queries: (vars) => {
      // Before 1.34 the body-size histogram has no group label; the etcd label set says which version answers. Only write bodies are measured.
      const bodyMatchers = [
        job(vars),
        m("resource", "=", vars.resource),
        vars.labelSets.etcd === "type" || vars.labelSets.etcd === "go-type" ? undefined : m("group", "=", vars.group),
      ];
      return {
        queries: [
          {
            name: "estimated object size",
            promql: `max${by(vars, ["group", "resource"])} (${selector("apiserver_resource_size_estimate_bytes", ofResource(vars))})`,
            whenEmpty: "apiserver_resource_size_estimate_bytes (Kubernetes 1.34+) is not scraped here.",
          },
          {
            name: "mean write body",
            promql: meanOf(vars, "apiserver_request_body_size_bytes", bodyMatchers, ["group", "resource"]),
            whenEmpty: "apiserver_request_body_size_bytes is not scraped here.",
          },
        ],
        infos: [],
      };
    },
  },
];
