/**
 * The replay as Prometheus would have scraped it: every modelled request, reconcile, propagation
 * and rebuild becomes a counter increment at its time; traffic the replay does not model object by
 * object (other resources, reads) is drawn per scrape interval. Metric names and labels are the
 * real components' own (kube-apiserver, Karmada, the gateway).
 */
import { countWithMean, createRng } from "../scenario/rng";
import type { CounterSeries } from "../scenario/counters";
import { SeriesBuilder } from "../scenario/series-builder";
import type { Replay } from "./replay";
import { CONTROL_PLANE, HUB_JOB, PROJECT_JOB, type ApiRequest } from "./types";

export const XDS_BUCKETS = [0.001, 0.01, 0.1, 1, 5, 10] as const;
export const HOOK_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10] as const;
export const INSTANCES: Record<string, string[]> = { [PROJECT_JOB]: ["10.40.0.11:6443", "10.40.0.12:6443"], [HUB_JOB]: ["10.41.0.10:5443"] };

interface Background extends Omit<ApiRequest, "timeMs" | "code" | "namespace" | "name" | "user" | "userAgent"> {
  perSecond: number;
  /** share of these requests answered 409 */
  conflicts?: number;
}

/** Writes the replay does not model object by object; 409 shares follow NSO's 24 h counts. */
const BACKGROUND: Background[] = [
  { job: PROJECT_JOB, resource: "httpproxies", group: "networking.datumapis.com", version: "v1alpha1", verb: "PUT", perSecond: 0.09, conflicts: 0.24 },
  { job: PROJECT_JOB, resource: "httpproxies", group: "networking.datumapis.com", version: "v1alpha1", verb: "PUT", subresource: "status", perSecond: 0.03 },
  {
    job: PROJECT_JOB,
    resource: "gateways",
    group: "gateway.networking.k8s.io",
    version: "v1",
    verb: "PUT",
    subresource: "status",
    perSecond: 0.07,
    conflicts: 0.24,
  },
  {
    job: PROJECT_JOB,
    resource: "httproutes",
    group: "gateway.networking.k8s.io",
    version: "v1",
    verb: "PUT",
    subresource: "status",
    perSecond: 0.06,
    conflicts: 0.21,
  },
  { job: PROJECT_JOB, resource: "networkinterfaces", group: "networking.datumapis.com", version: "v1alpha", verb: "PUT", perSecond: 0.03, conflicts: 0.2 },
  { job: PROJECT_JOB, resource: "backendtlspolicies", group: "gateway.networking.k8s.io", version: "v1alpha3", verb: "PUT", perSecond: 0.03, conflicts: 0.2 },
  { job: PROJECT_JOB, resource: "endpointslices", group: "discovery.k8s.io", version: "v1", verb: "PUT", perSecond: 0.02 },
  { job: PROJECT_JOB, resource: "dnsrecordsets", group: "dns.networking.miloapis.com", version: "v1alpha1", verb: "PUT", perSecond: 0.004 },
  { job: PROJECT_JOB, resource: "events", group: "", version: "v1", verb: "POST", perSecond: 0.12 },
  { job: PROJECT_JOB, resource: "configmaps", group: "", version: "v1", verb: "PUT", perSecond: 0.005 },
  { job: PROJECT_JOB, resource: "secrets", group: "", version: "v1", verb: "PATCH", perSecond: 0.003 },
  { job: HUB_JOB, resource: "works", group: "work.karmada.io", version: "v1alpha1", verb: "PUT", perSecond: 0.05 },
  { job: HUB_JOB, resource: "networkinterfaces", group: "networking.datumapis.com", version: "v1alpha", verb: "PUT", perSecond: 0.04, conflicts: 0.24 },
  { job: HUB_JOB, resource: "networkbindings", group: "networking.datumapis.com", version: "v1alpha", verb: "PUT", perSecond: 0.025, conflicts: 0.2 },
  { job: HUB_JOB, resource: "httpproxies", group: "networking.datumapis.com", version: "v1alpha1", verb: "PUT", perSecond: 0.01 },
  { job: HUB_JOB, resource: "configmaps", group: "", version: "v1", verb: "PUT", perSecond: 0.004 },
];

/** Object sizes in bytes: the size estimate, each write's body and each watch event carry about this much. */
const OBJECT_BYTES: Record<string, number> = { connectors: 2600, leases: 380 };
/** The flow schema (and priority level) API Priority and Fairness files each modelled resource's writers under. */
const FLOWS: Record<string, { flow_schema: string; priority_level: string }> = {
  connectors: { flow_schema: "service-accounts", priority_level: "workload-low" },
  leases: { flow_schema: "workload-leader-election", priority_level: "leader-election" },
};
/** Buckets of the API server's own histograms, as it declares them. */
const WATCH_COUNT_BUCKETS = [0, 1, 10, 100, 1000, 10000];
const SEAT_BUCKETS = [1, 2, 4, 10];
const WATCH_SIZE_BUCKETS = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072];
const BODY_BUCKETS = [50000, 150000, 250000];

/** Who watches what: each stored change is one watch event per watcher. */
export const WATCHERS: Record<string, number> = { [`${PROJECT_JOB}/connectors`]: 4, [`${PROJECT_JOB}/leases`]: 2, [`${HUB_JOB}/connectors`]: 2 };

function requestLabels(
  job: string,
  instance: string,
  r: { resource: string; group: string; version: string; verb: string; subresource?: string },
  code: number,
) {
  const labels: Record<string, string> = {
    job,
    instance,
    verb: r.verb,
    resource: r.resource,
    group: r.group,
    version: r.version,
    scope: "resource",
    component: "apiserver",
    code: String(code),
  };
  if (r.subresource) labels.subresource = r.subresource;
  return labels;
}

export function replaySeries({ params, sink }: Replay): CounterSeries[] {
  const grid = { startSeconds: params.startMs / 1000, endSeconds: params.endMs / 1000, intervalSeconds: params.scrapeIntervalSeconds };
  const b = new SeriesBuilder(grid);
  const rng = createRng(params.seed ^ 0x5eed);
  const pickInstance = (job: string) => INSTANCES[job][Math.floor(rng() * INSTANCES[job].length)];
  const s = (ms: number) => ms / 1000;

  // The project API server runs Kubernetes 1.36 and exposes the families that count what a write cost; the hub does not.
  const signals = (job: string) => job === PROJECT_JOB;
  for (const q of sink.requests) {
    const instance = pickInstance(q.job);
    b.count("apiserver_request_total", requestLabels(q.job, instance, q, q.code), s(q.timeMs));
    if (q.code >= 300) continue;
    const operation = q.verb === "POST" ? "create" : q.verb === "DELETE" && q.resource === "leases" ? "delete" : "update";
    b.count("etcd_requests_total", { job: q.job, instance, operation, group: q.group, resource: q.resource }, s(q.timeMs));
    const watchers = WATCHERS[`${q.job}/${q.resource}`] ?? 1;
    b.count("apiserver_watch_events_total", { job: q.job, instance, group: q.group, version: q.version, resource: q.resource }, s(q.timeMs), watchers);
    if (signals(q.job)) writeCost(b, q, instance, watchers);
  }

  for (const bg of BACKGROUND) {
    for (const instance of INSTANCES[bg.job]) {
      const mean = (bg.perSecond * grid.intervalSeconds) / INSTANCES[bg.job].length;
      const conflicts = bg.conflicts ?? 0;
      const ok = bg.verb === "POST" ? 201 : 200;
      b.countPerInterval("apiserver_request_total", requestLabels(bg.job, instance, bg, ok), () => countWithMean(mean * (1 - conflicts), rng));
      if (conflicts > 0) b.countPerInterval("apiserver_request_total", requestLabels(bg.job, instance, bg, 409), () => countWithMean(mean * conflicts, rng));
      // Some of these are no-ops that never reach etcd, which the effective-writes estimate shows.
      b.countPerInterval(
        "etcd_requests_total",
        { job: bg.job, instance, operation: bg.verb === "POST" ? "create" : "update", group: bg.group, resource: bg.resource },
        (t) => {
          const stored = countWithMean(mean * (1 - conflicts) * 0.6, rng);
          // Every replica's watch cache receives each stored change.
          if (signals(bg.job) && stored > 0) {
            for (const replica of INSTANCES[bg.job])
              b.count("apiserver_storage_events_received_total", { job: bg.job, instance: replica, group: bg.group, resource: bg.resource }, t, stored);
          }
          return stored;
        },
      );
    }
  }
  // Reads are never writes; they are here so the panels prove they leave them out.
  for (const job of [PROJECT_JOB, HUB_JOB]) {
    for (const instance of INSTANCES[job]) {
      for (const verb of ["GET", "LIST", "WATCH"]) {
        const r = { resource: "connectors", group: "networking.datumapis.com", version: "v1alpha1", verb };
        b.countPerInterval("apiserver_request_total", requestLabels(job, instance, r, 200), () => countWithMean(verb === "GET" ? 3 : 0.2, rng));
      }
    }
  }

  const controllerLabels = (controller: string, result: string) => ({
    job: "network-services-operator",
    cluster: CONTROL_PLANE,
    namespace: "network-services-operator-system",
    controller,
    result,
  });
  for (const controller of ["connector", "iroh-dns", "gateway_resource_replicator"]) {
    for (const result of ["success", "error", "requeue_after"]) b.declare("controller_runtime_reconcile_total", controllerLabels(controller, result));
  }
  for (const r of sink.reconciles) b.count("controller_runtime_reconcile_total", controllerLabels(r.controller, r.result), s(r.timeMs));

  for (const p of sink.propagations) {
    const apiversion = "networking.datumapis.com/v1alpha1";
    b.count(
      "update_resource_to_cluster",
      { job: "karmada-controller-manager", result: "success", apiversion, kind: p.kind, member_cluster: p.site, operationResult: p.operationResult },
      s(p.timeMs),
    );
  }

  for (const site of params.sites) {
    const xds = { job: "envoy-gateway", cluster: site, runner: "xds", message: "xds-ir" };
    b.declare("watchable_subscribe_total", { ...xds, status: "success" });
    b.declareHistogram("watchable_subscribe_duration_seconds", xds, XDS_BUCKETS);
    b.declareHistogram("nso_extension_hook_duration_seconds", { job: "nso-extension-server", cluster: site, outcome: "success" }, HOOK_BUCKETS);
    b.gauge("watchable_depth", xds, grid.startSeconds, 0);
  }
  for (const r of sink.rebuilds) {
    const endSeconds = s(r.startMs + r.durationMs);
    const xds = { job: "envoy-gateway", cluster: r.site, runner: "xds", message: "xds-ir" };
    // The gateway-api runner translated the provider's resources just before; it takes a small share of the xDS rebuild's time.
    const translation = { job: "envoy-gateway", cluster: r.site, runner: "gateway-api", message: "provider-resources" };
    b.observe("watchable_subscribe_duration_seconds", translation, XDS_BUCKETS, s(r.startMs), translationMs(r.durationMs));
    // Each rebuild recomputes the routes' statuses; unchanged ones are not written.
    b.count("status_update_total", { job: "envoy-gateway", cluster: r.site, kind: "HTTPRoute", status: "no_action" }, endSeconds, EDGE_ROUTES);
    b.count("watchable_subscribe_total", { ...xds, status: "success" }, endSeconds);
    b.observe("watchable_subscribe_duration_seconds", xds, XDS_BUCKETS, endSeconds, r.durationMs);
    b.count("nso_extension_hook_calls_total", { job: "nso-extension-server", cluster: r.site, outcome: "success" }, endSeconds);
    b.observe("nso_extension_hook_duration_seconds", { job: "nso-extension-server", cluster: r.site, outcome: "success" }, HOOK_BUCKETS, endSeconds, r.hookMs);
    if (r.queuedSinceMs !== undefined) {
      b.gauge("watchable_depth", xds, s(r.queuedSinceMs), 1);
      b.gauge("watchable_depth", xds, s(r.startMs), 0);
    }
  }
  declareSignals(b, grid.startSeconds);
  return b.build();
}

/** HTTPRoutes on each edge gateway, whose status every rebuild recomputes. */
export const EDGE_ROUTES = 3;
/** The gateway-api runner's translation time for an xDS rebuild of `durationMs`. */
export const translationMs = (durationMs: number) => Math.round(durationMs * 0.08) + 2;
/** A modelled object's size in bytes; it varies a little with the write's time. */
export const objectBytes = (resource: string, timeMs: number) => (OBJECT_BYTES[resource] ?? 1000) + (Math.floor(timeMs / 1000) % 97);

/** What one modelled successful write cost the project API server: its stored change, watchers, seats and bytes. */
function writeCost(b: SeriesBuilder, q: ApiRequest, instance: string, watchers: number) {
  const t = q.timeMs / 1000;
  const resource = { group: q.group, resource: q.resource };
  const bytes = objectBytes(q.resource, q.timeMs);
  for (const replica of INSTANCES[q.job]) b.count("apiserver_storage_events_received_total", { job: q.job, instance: replica, ...resource }, t);
  const flow = FLOWS[q.resource] ?? { flow_schema: "global-default", priority_level: "global-default" };
  b.observeValue("apiserver_flowcontrol_watch_count_samples", { job: q.job, instance, ...flow }, WATCH_COUNT_BUCKETS, t, watchers);
  b.observeValue("apiserver_flowcontrol_work_estimated_seats", { job: q.job, instance, ...flow }, SEAT_BUCKETS, t, 1);
  b.observeValue(
    "apiserver_request_body_size_bytes",
    { job: q.job, instance, ...resource, verb: q.verb === "POST" ? "create" : "update" },
    BODY_BUCKETS,
    t,
    bytes,
  );
  for (let w = 0; w < watchers; w++)
    b.observeValue("apiserver_watch_events_sizes", { job: q.job, instance, ...resource, version: q.version }, WATCH_SIZE_BUCKETS, t, bytes);
}

/** The project API server's size estimates, and the managedFields comparison's families, which exist whether or not anything is counted. */
function declareSignals(b: SeriesBuilder, startSeconds: number) {
  for (const instance of INSTANCES[PROJECT_JOB]) {
    for (const [resource, group] of [
      ["connectors", "networking.datumapis.com"],
      ["leases", "coordination.k8s.io"],
    ]) {
      b.gauge("apiserver_resource_size_estimate_bytes", { job: PROJECT_JOB, instance, group, resource }, startSeconds, OBJECT_BYTES[resource]);
    }
    b.declareHistogram("apiserver_request_timestamp_comparison_time", { job: PROJECT_JOB, instance, code_path: "equal_objects" }, [0.0001, 0.001, 0.01]);
  }
}
