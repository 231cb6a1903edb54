/**
 * The Write load panels, as data. Each entry says what it shows, in which unit, and how to build
 * its PromQL from validated variables; panels.ts runs them. Ids are stable: they appear in URLs,
 * the JSON API and snapshots.
 */
import { selector, type Matcher } from "../promql/promql";
import { dottedResource, goTypeResource, storageResource } from "./resource-labels";
import { CLIENT_PANELS } from "./client-panels";
import { SIGNAL_PANELS } from "./signals";
import { by, counterRate, exactIncrease, m, notDryRun, perReplica, storableWrites, writes, type NamedQuery, type PanelDef, type PanelVars } from "./queries";

export const PANELS: readonly PanelDef[] = [
  {
    id: "writes-by-resource",
    title: "Writes by resource",
    description:
      "Write requests per second by resource (all write verbs, every response code; dry runs left out unless counted); the 10 largest over the range, the rest summed as other.",
    unit: "writes/s",
    mode: "range",
    chart: "stacked",
    needsResource: false,
    topN: 10,
    resourcePinsSeries: true,
    queries: (vars) => ({
      queries: [{ promql: `sum${by(vars, ["group", "resource"])} (${counterRate(writes({ ...vars, resource: undefined, group: undefined }), vars)})` }],
      infos: [],
    }),
  },
  {
    id: "writes-by-verb",
    title: "Writes by verb and subresource",
    description: "One resource's write requests per second split by verb and subresource (status writes vs the object itself).",
    unit: "writes/s",
    mode: "range",
    chart: "lines",
    needsResource: true,
    queries: (vars) => ({
      queries: [{ promql: `sum${by(vars, ["verb", "subresource"])} (${counterRate(writes(vars), vars)})` }],
      infos: [],
    }),
  },
  {
    id: "write-totals",
    title: "Write totals",
    description:
      "Writes over the whole range, by resource, verb and subresource, exactly as the API servers counted them: each counter's rise from its last scrape before the range " +
      "(or from zero, for a counter born in the range) to its last scrape in it. Where a counter restarted within the range, or Prometheus holds nothing before it, Prometheus's increase(), which extrapolates to the range's edges.",
    unit: "writes",
    mode: "total",
    chart: "table",
    needsResource: false,
    queries: (vars) => ({
      queries: [{ promql: `sum${by(vars, ["group", "resource", "verb", "subresource"])} (${exactIncrease(writes(vars), vars.rangeSeconds)})` }],
      infos: [],
    }),
  },
  {
    id: "write-errors",
    title: "Failed writes by code",
    description: "Write requests per second that did not succeed: 409 is an optimistic-concurrency conflict, 429 a flow-control rejection.",
    unit: "writes/s",
    mode: "range",
    chart: "lines",
    needsResource: false,
    queries: (vars) => ({
      queries: [{ promql: `sum${by(vars, ["code"])} (${counterRate(writes(vars, [m("code", "!~", "2..")]), vars)})` }],
      infos: [],
    }),
  },
  {
    id: "effective-writes",
    title: "API writes vs effective writes",
    description: "Successful write requests against the writes that reached storage. The gap estimates no-op writes: requests that changed nothing.",
    unit: "writes/s",
    mode: "range",
    chart: "lines",
    needsResource: false,
    estimate:
      "no-op writes ≈ successful API writes (2xx) − effective writes (etcd create/update/delete, or watch-cache events when etcd metrics are absent). " +
      "API writes leave out access and token reviews and TokenRequests, which are answered without storing anything. " +
      "Where the API server counts storage events (Kubernetes 1.30+), effective writes are those events, one replica per API server. " +
      "A byte-identical update is answered without touching etcd, so it appears only on the left. Storage writes the API server makes on its own " +
      "(garbage collection, finalizer removal) appear only on the right, so the gap is an estimate, not a count.",
    queries: (vars) => effectiveWriteQueries(vars),
  },
  {
    id: "lease-renewals",
    title: "Lease renewals",
    description: "Lease writes per second (agents and controllers heartbeating); a rise often drives reconciles of the objects that own the leases.",
    unit: "writes/s",
    mode: "range",
    chart: "lines",
    needsResource: false,
    queries: (vars) => ({
      queries: [
        {
          promql: `sum${by(vars, ["verb"])} (${counterRate(
            selector("apiserver_request_total", [
              m("job", "=", vars.job),
              m("resource", "=", "leases"),
              m("verb", "=~", "PATCH|PUT|APPLY|POST"),
              notDryRun(vars),
            ]),
            vars,
          )})`,
        },
      ],
      infos: [],
    }),
  },
  {
    id: "watch-fanout",
    title: "Watch fan-out",
    description: "Watch events delivered to all watchers per second: each effective write is sent to every watcher of its kind.",
    unit: "events/s",
    mode: "range",
    chart: "stacked",
    needsResource: false,
    topN: 10,
    queries: (vars) => watchFanoutQueries(vars),
  },
  ...SIGNAL_PANELS,
];

/** Any panel a page asks for by id: Write load's, or the Clients page's (client-panels.ts). */
export function findPanel(id: string): PanelDef | undefined {
  return PANELS.find((p) => p.id === id) ?? CLIENT_PANELS.find((p) => p.id === id);
}

function effectiveWriteQueries(vars: PanelVars): { queries: NamedQuery[]; infos: string[] } {
  const api = storableWrites(vars);
  const { storageEvents = "none", etcd } = vars.labelSets;
  if (storageEvents !== "none") {
    // From 1.30 the API server counts the events etcd really produced, per resource, on every replica.
    const events = selector("apiserver_storage_events_received_total", [m("job", "=", vars.job), ...storageResource(vars)]);
    return { queries: [api, { name: "effective writes (storage events)", promql: perReplica(vars, events) }], infos: [] };
  }
  const operations = m("operation", "=~", "create|update|delete");
  const counter = vars.labelSets.etcdCounter ?? "etcd_requests_total";
  // Before 1.28 the request-duration histogram's count is the only counter of etcd requests.
  const counterInfos =
    counter === "etcd_requests_total"
      ? []
      : ["etcd_requests_total is not exposed by this API server (Kubernetes ≤ 1.27); effective writes count etcd_request_duration_seconds_count."];
  const goType = etcd === "go-type" ? goTypeResource(vars.resource, vars.group) : undefined;
  if (etcd !== "none" && goType !== "custom") {
    const resource: (Matcher | undefined)[] =
      etcd === "group-resource"
        ? [m("resource", "=", vars.resource), m("group", "=", vars.group)]
        : etcd === "type"
          ? [dottedResource("type", vars.resource, vars.group)]
          : [goType];
    return {
      queries: [
        api,
        { name: "effective writes (etcd)", promql: `sum(${counterRate(selector(counter, [m("job", "=", vars.job), ...resource, operations]), vars)})` },
      ],
      infos: counterInfos,
    };
  }
  const customInfo =
    "This API server labels etcd requests by Go type (Kubernetes ≤ 1.25), where every custom resource is *unstructured.Unstructured, so its effective writes cannot be told apart.";
  if (vars.labelSets.watchCache !== "none") {
    const resource =
      vars.labelSets.watchCache === "group-resource"
        ? [m("resource", "=", vars.resource), m("group", "=", vars.group)]
        : [dottedResource("resource", vars.resource, vars.group)];
    return {
      queries: [
        api,
        {
          // Every API server replica's watch cache receives every change, so take one replica, not the sum.
          name: "effective writes (watch cache)",
          promql: perReplica(vars, selector("apiserver_watch_cache_events_received_total", [m("job", "=", vars.job), ...resource])),
        },
      ],
      infos: [
        goType === "custom"
          ? `${customInfo} Effective writes come from watch-cache events (one replica).`
          : "No etcd request counter (etcd_requests_total, etcd_request_duration_seconds_count) is scraped here; effective writes come from watch-cache events (one replica).",
      ],
    };
  }
  return {
    queries: [api],
    infos: [
      goType === "custom"
        ? `${customInfo} No watch-cache or storage-event counter (Kubernetes 1.27+) is scraped to count them instead.`
        : "None of etcd_requests_total, etcd_request_duration_seconds_count and apiserver_watch_cache_events_received_total is scraped for this API server, so effective writes cannot be shown.",
    ],
  };
}

function watchFanoutQueries(vars: PanelVars): { queries: NamedQuery[]; infos: string[] } {
  const metric = "apiserver_watch_events_total";
  if (vars.labelSets.watchEvents === "kind") {
    // Kubernetes ≤ 1.33 labels watch events by kind, which a resource name cannot be mapped to here.
    return {
      queries: [{ promql: `sum${by(vars, ["group", "kind"])} (${counterRate(selector(metric, [m("job", "=", vars.job)]), vars)})` }],
      infos: vars.resource
        ? ["This API server labels watch events by kind (Kubernetes ≤ 1.33), so the panel shows every kind, not only the selected resource."]
        : [],
    };
  }
  return {
    queries: [
      {
        promql: `sum${by(vars, ["group", "resource"])} (${counterRate(selector(metric, [m("job", "=", vars.job), m("resource", "=", vars.resource), m("group", "=", vars.group)]), vars)})`,
      },
    ],
    infos: vars.labelSets.watchEvents === "none" ? ["apiserver_watch_events_total is not scraped for this API server."] : [],
  };
}
