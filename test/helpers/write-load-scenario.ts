/**
 * A 12-hour write-load scenario for two API servers with known increments, including a step up in
 * Connector status writes at 13:12Z, read traffic that must not count as writes, 409s, and more
 * than ten resources so the "other" series is exercised. Ground truth comes from the generator's
 * own cumulative values, never from Prometheus.
 */
import { eventsBetween, sampleCounters, type CounterSeries, type CounterSpec } from "@/lib/scenario/counters";
import { countWithMean, createRng } from "@/lib/scenario/rng";

export const PROJECT_JOB = "milo-apiserver";
export const HUB_JOB = "karmada-system/karmada-apiserver";
/** An API server on Kubernetes ≤ 1.33: etcd metrics labelled type="<resource>.<group>", watch events by kind. */
export const LEGACY_JOB = "legacy-apiserver";
/** An API server on Kubernetes ≤ 1.27: no etcd_requests_total, only etcd_request_duration_seconds_count{operation,type}. */
export const OLD_JOB = "apiserver-1-26";
export const GRID = {
  startSeconds: Date.parse("2026-09-11T06:00:00Z") / 1000,
  endSeconds: Date.parse("2026-09-11T18:00:00Z") / 1000,
  intervalSeconds: 15,
};
export const ONSET_SECONDS = Date.parse("2026-09-11T13:12:00Z") / 1000;

interface ResourceSpec {
  resource: string;
  group: string;
  /** write verb/subresource → writes per second, across the whole API server */
  writes: { verb: string; subresource?: string; perSecond: number; afterOnset?: number }[];
  /** answered without storing anything (reviews, TokenRequests): no etcd writes, no watch events */
  neverStored?: true;
}

const PROJECT_RESOURCES: ResourceSpec[] = [
  {
    resource: "connectors",
    group: "networking.datumapis.com",
    writes: [
      { verb: "PUT", subresource: "status", perSecond: 0.004, afterOnset: 0.07 },
      { verb: "PATCH", subresource: "status", perSecond: 0.003 },
      { verb: "PUT", perSecond: 0.0008 },
      { verb: "POST", perSecond: 0.0002 },
      { verb: "DELETE", perSecond: 0.0001 },
    ],
  },
  {
    resource: "leases",
    group: "coordination.k8s.io",
    writes: [
      { verb: "PATCH", perSecond: 0.35, afterOnset: 0.6 },
      { verb: "PUT", perSecond: 0.05 },
    ],
  },
  {
    resource: "httpproxies",
    group: "networking.datumapis.com",
    writes: [
      { verb: "PUT", perSecond: 0.02 },
      { verb: "APPLY", subresource: "status", perSecond: 0.01 },
    ],
  },
  { resource: "gateways", group: "gateway.networking.k8s.io", writes: [{ verb: "PUT", subresource: "status", perSecond: 0.03 }] },
  { resource: "httproutes", group: "gateway.networking.k8s.io", writes: [{ verb: "PATCH", subresource: "status", perSecond: 0.1 }] },
  {
    resource: "configmaps",
    group: "",
    writes: [
      { verb: "PUT", perSecond: 0.005 },
      { verb: "DELETECOLLECTION", perSecond: 0.0005 },
    ],
  },
  { resource: "secrets", group: "", writes: [{ verb: "PUT", perSecond: 0.004 }] },
  {
    resource: "events",
    group: "",
    writes: [
      { verb: "POST", perSecond: 0.2 },
      { verb: "PATCH", perSecond: 0.05 },
    ],
  },
  { resource: "pods", group: "", writes: [{ verb: "PATCH", subresource: "status", perSecond: 0.015 }] },
  // What kubelets, metrics-server and authenticating proxies send: POSTs that store nothing.
  { resource: "subjectaccessreviews", group: "authorization.k8s.io", writes: [{ verb: "POST", perSecond: 0.05 }], neverStored: true },
  { resource: "serviceaccounts", group: "", writes: [{ verb: "POST", subresource: "token", perSecond: 0.01 }], neverStored: true },
  { resource: "networkinterfaces", group: "networking.datumapis.com", writes: [{ verb: "PUT", perSecond: 0.008 }] },
  { resource: "backendtlspolicies", group: "gateway.networking.k8s.io", writes: [{ verb: "PUT", perSecond: 0.006 }] },
  { resource: "endpointslices", group: "discovery.k8s.io", writes: [{ verb: "PUT", perSecond: 0.002 }] },
  { resource: "dnsrecordsets", group: "dns.networking.miloapis.com", writes: [{ verb: "PUT", perSecond: 0.001 }] },
];

const HUB_RESOURCES: ResourceSpec[] = [
  { resource: "connectors", group: "networking.datumapis.com", writes: [{ verb: "PUT", perSecond: 0.003, afterOnset: 0.065 }] },
  { resource: "works", group: "work.karmada.io", writes: [{ verb: "PUT", perSecond: 0.04 }] },
];

const LEGACY_RESOURCES: ResourceSpec[] = [
  { resource: "connectors", group: "networking.datumapis.com", writes: [{ verb: "PUT", subresource: "status", perSecond: 0.02 }] },
  { resource: "leases", group: "coordination.k8s.io", writes: [{ verb: "PATCH", perSecond: 0.2 }] },
];

const PROJECT_INSTANCES = ["10.0.0.1:6443", "10.0.0.2:6443"];
const HUB_INSTANCES = ["10.1.0.1:6443"];
/** Share of PUTs answered 409 (conflict). */
const CONFLICT_SHARE = 0.05;
/** Share of successful Connector writes that change stored bytes (the rest are no-ops). */
const EFFECTIVE_SHARE = 0.4;

function perScrape(perSecondWholeServer: number, instances: number): number {
  return (perSecondWholeServer * GRID.intervalSeconds) / instances;
}

function requestLabels(job: string, instance: string, r: ResourceSpec, verb: string, subresource: string | undefined, code: string) {
  const labels: Record<string, string> = { job, instance, verb, resource: r.resource, version: "v1", scope: "resource", component: "apiserver", code };
  if (r.group) labels.group = r.group;
  if (subresource) labels.subresource = subresource;
  return labels;
}

type LabelStyle = "1.34" | "1.33" | "1.26";

function kindOf(resource: string): string {
  const singular = resource.replace(/s$/, "");
  return singular[0].toUpperCase() + singular.slice(1);
}

function specsFor(job: string, instances: string[], resources: ResourceSpec[], style: LabelStyle = "1.34"): CounterSpec[] {
  const specs: CounterSpec[] = [];
  for (const instance of instances) {
    for (const r of resources) {
      for (const w of r.writes) {
        const mean = (t: number) => perScrape(t > ONSET_SECONDS && w.afterOnset !== undefined ? w.afterOnset : w.perSecond, instances.length);
        const okCode = w.verb === "POST" ? "201" : "200";
        const conflicts = w.verb === "PUT" ? CONFLICT_SHARE : 0;
        specs.push({
          name: "apiserver_request_total",
          labels: requestLabels(job, instance, r, w.verb, w.subresource, okCode),
          increment: (t, rng) => countWithMean(mean(t) * (1 - conflicts), rng),
        });
        if (conflicts > 0) {
          specs.push({
            name: "apiserver_request_total",
            labels: requestLabels(job, instance, r, w.verb, w.subresource, "409"),
            increment: (t, rng) => countWithMean(mean(t) * conflicts, rng),
          });
        }
      }
      // Reads: never counted as writes.
      for (const verb of ["GET", "LIST", "WATCH"]) {
        specs.push({
          name: "apiserver_request_total",
          labels: requestLabels(job, instance, r, verb, undefined, "200"),
          increment: (_t, rng) => countWithMean(perScrape(0.5, instances.length), rng),
        });
      }
      if (r.neverStored) continue;
      specs.push({
        name: style === "1.26" ? "etcd_request_duration_seconds_count" : "etcd_requests_total",
        labels:
          style === "1.34"
            ? { job, instance, operation: "update", group: r.group, resource: r.resource }
            : { job, instance, operation: "update", type: r.group ? `${r.resource}.${r.group}` : r.resource },
        increment: (t, rng) => {
          const total = r.writes.reduce((sum, w) => sum + (t > ONSET_SECONDS && w.afterOnset !== undefined ? w.afterOnset : w.perSecond), 0);
          return countWithMean(perScrape(total, instances.length) * EFFECTIVE_SHARE, rng);
        },
      });
      specs.push({
        name: "apiserver_watch_events_total",
        labels:
          style === "1.34"
            ? { job, instance, group: r.group, version: "v1", resource: r.resource }
            : { job, instance, group: r.group, version: "v1", kind: kindOf(r.resource) },
        increment: (_t, rng) => countWithMean(perScrape(1.5, instances.length), rng),
      });
    }
  }
  return specs;
}

export function buildWriteLoadScenario(seed = 20260911): CounterSeries[] {
  const rng = createRng(seed);
  return sampleCounters(
    [
      ...specsFor(PROJECT_JOB, PROJECT_INSTANCES, PROJECT_RESOURCES),
      ...specsFor(HUB_JOB, HUB_INSTANCES, HUB_RESOURCES),
      ...specsFor(LEGACY_JOB, ["10.2.0.1:6443"], LEGACY_RESOURCES, "1.33"),
      ...specsFor(OLD_JOB, ["10.3.0.1:6443"], LEGACY_RESOURCES, "1.26"),
    ],
    GRID,
    rng,
  );
}

export const WRITE_VERBS = new Set(["POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"]);

export type Filter = (labels: Record<string, string>, name: string) => boolean;

export const writesOf =
  (job: string, extra: Filter = () => true): Filter =>
  (labels, name) =>
    name === "apiserver_request_total" && labels.job === job && WRITE_VERBS.has(labels.verb) && extra(labels, name);

/** Exact events in (fromSeconds, toSeconds] summed over the matching series. */
export function truthTotal(series: CounterSeries[], filter: Filter, fromSeconds: number, toSeconds: number): number {
  let total = 0;
  for (const s of series) if (filter(s.labels, s.name)) total += eventsBetween(s, fromSeconds, toSeconds);
  return total;
}

/** Groups matching series by a key and returns exact events in (from, to] per key. */
export function truthByKey(
  series: CounterSeries[],
  filter: Filter,
  key: (labels: Record<string, string>) => string,
  fromSeconds: number,
  toSeconds: number,
): Map<string, number> {
  const out = new Map<string, number>();
  for (const s of series) {
    if (!filter(s.labels, s.name)) continue;
    const k = key(s.labels);
    out.set(k, (out.get(k) ?? 0) + eventsBetween(s, fromSeconds, toSeconds));
  }
  return out;
}
