/**
 * Two hours of the signals no request counter shows, with every event kept: writes (some of them
 * dry runs), the changes etcd stored (received by both replicas), managedFields-only updates,
 * consumers' skipped updates, watchers and seats per request, watch event sizes, object sizes and
 * write bodies. Ground truth is computed from these events, never from Prometheus.
 */
import { createRng } from "@/lib/scenario/rng";
import { SeriesBuilder } from "@/lib/scenario/series-builder";
import type { CounterSeries } from "@/lib/scenario/counters";

/** A 1.36 API server with two replicas: storage events, size estimates, group-labelled body sizes. */
export const SIGNALS_JOB = "apiserver-1-36";
/** A 1.33 API server: none of the new families, watch events labelled by kind. */
export const OLD_SIGNALS_JOB = "apiserver-1-33";
const INSTANCES = ["10.9.0.1:6443", "10.9.0.2:6443"];
export const SIGNALS_GRID = {
  startSeconds: Date.parse("2026-10-01T10:00:00Z") / 1000,
  endSeconds: Date.parse("2026-10-01T12:00:00Z") / 1000,
  intervalSeconds: 15,
};

export const WATCH_COUNT_BUCKETS = [0, 1, 10, 100, 1000, 10000];
export const SEAT_BUCKETS = [1, 2, 4, 10];
export const WATCH_SIZE_BUCKETS = [1024, 2048, 4096, 8192, 16384, 32768, 65536, 131072];
export const BODY_BUCKETS = [50000, 150000, 250000];

interface ResourceSpec {
  resource: string;
  group: string;
  /** successful writes per scrape interval, whole API server */
  writes: number;
  /** share of writes that change the stored object */
  stored: number;
  watchers: number;
  /** object size in bytes, as the estimate and the write bodies see it */
  bytes: number;
}

const RESOURCES: ResourceSpec[] = [
  { resource: "connectors", group: "networking.datumapis.com", writes: 6, stored: 0.25, watchers: 4, bytes: 3100 },
  { resource: "leases", group: "coordination.k8s.io", writes: 5, stored: 1, watchers: 2, bytes: 410 },
  { resource: "configmaps", group: "", writes: 1, stored: 0.8, watchers: 30, bytes: 61000 },
];

const FLOWS = [
  { flow_schema: "workload-leader-election", priority_level: "leader-election", seats: [1, 1] },
  { flow_schema: "service-accounts", priority_level: "workload-low", seats: [1, 4] },
  { flow_schema: "global-default", priority_level: "global-default", seats: [2, 10] },
];

export interface SignalEvent {
  t: number;
  kind: "write" | "dry-run" | "stored" | "equal-objects" | "consumer-noop" | "request" | "watch-event" | "size";
  resource?: string;
  group?: string;
  flow_schema?: string;
  consumer?: string;
  instance?: string;
  /** watchers notified (request), seats (request), bytes (watch-event, write, size) */
  value?: number;
  seats?: number;
}

export interface SignalsScenario {
  series: CounterSeries[];
  events: SignalEvent[];
}

const CONSUMERS = [
  { consumer: "Contour", metric: "contour_status_update_noop_total", labels: { kind: "HTTPProxy" }, perInterval: 2 },
  { consumer: "Envoy Gateway", metric: "status_update_total", labels: { kind: "HTTPRoute", status: "no_action" }, perInterval: 3 },
  { consumer: "Karmada", metric: "update_resource_to_cluster", labels: { result: "success", operationResult: "unchanged", kind: "Connector" }, perInterval: 1 },
  {
    consumer: "Cilium",
    metric: "cilium_kubernetes_events_received_total",
    labels: { scope: "CiliumEndpoint", action: "update", equal: "true" },
    perInterval: 4,
  },
] as const;
export const CONSUMER_NAMES: Record<(typeof CONSUMERS)[number]["consumer"], string> = {
  Contour: "Contour: status updates skipped as unchanged",
  "Envoy Gateway": "Envoy Gateway: status updates with no action",
  Karmada: "Karmada: propagations that changed nothing",
  Cilium: "Cilium: watch events equal to the cached object",
};

export function buildSignalsScenario(seed = 20261001): SignalsScenario {
  const rng = createRng(seed);
  const b = new SeriesBuilder(SIGNALS_GRID);
  const events: SignalEvent[] = [];
  const job = SIGNALS_JOB;
  const upTo = (n: number) => Math.floor(rng() * (n + 1));
  const { startSeconds, endSeconds, intervalSeconds } = SIGNALS_GRID;
  for (let slotEnd = startSeconds + intervalSeconds; slotEnd <= endSeconds; slotEnd += intervalSeconds) {
    const at = () => slotEnd - intervalSeconds + 1 + Math.floor(rng() * intervalSeconds);
    for (const r of RESOURCES) {
      const rl = { resource: r.resource, group: r.group };
      const writes = upTo(r.writes * 2);
      for (let i = 0; i < writes; i++) {
        const t = at();
        const instance = INSTANCES[i % 2];
        const flow = FLOWS[i % FLOWS.length];
        b.count(
          "apiserver_request_total",
          { job, instance, verb: "PUT", ...rl, version: "v1", scope: "resource", component: "apiserver", code: "200", dry_run: "" },
          t,
        );
        const body = r.bytes + upTo(200);
        b.observeValue("apiserver_request_body_size_bytes", { job, instance, ...rl, verb: "update" }, BODY_BUCKETS, t, body);
        events.push({ t, kind: "write", ...rl, value: body });
        const stored = rng() < r.stored;
        const watchers = stored ? r.watchers : 0;
        const seats = flow.seats[i % flow.seats.length];
        b.observeValue(
          "apiserver_flowcontrol_watch_count_samples",
          { job, instance, flow_schema: flow.flow_schema, priority_level: flow.priority_level },
          WATCH_COUNT_BUCKETS,
          t,
          watchers,
        );
        b.observeValue(
          "apiserver_flowcontrol_work_estimated_seats",
          { job, instance, flow_schema: flow.flow_schema, priority_level: flow.priority_level },
          SEAT_BUCKETS,
          t,
          seats,
        );
        events.push({ t, kind: "request", flow_schema: flow.flow_schema, value: watchers, seats });
        if (!stored) continue;
        // Every replica's watch cache receives every stored change; the replica that served the request sends the watch events.
        for (const replica of INSTANCES) b.count("apiserver_storage_events_received_total", { job, instance: replica, ...rl }, t);
        events.push({ t, kind: "stored", ...rl });
        for (let w = 0; w < r.watchers; w++) {
          const bytes = r.bytes + upTo(64);
          b.count("apiserver_watch_events_total", { job, instance, ...rl, version: "v1" }, t);
          b.observeValue("apiserver_watch_events_sizes", { job, instance, ...rl, version: "v1" }, WATCH_SIZE_BUCKETS, t, bytes);
          events.push({ t, kind: "watch-event", ...rl, value: bytes });
        }
      }
      // Dry runs are validated and never stored.
      if (r.resource === "connectors") {
        const dry = upTo(2);
        for (let i = 0; i < dry; i++) {
          const t = at();
          b.count(
            "apiserver_request_total",
            { job, instance: INSTANCES[0], verb: "PATCH", ...rl, version: "v1", scope: "resource", component: "apiserver", code: "200", dry_run: "All" },
            t,
          );
          events.push({ t, kind: "dry-run", ...rl });
        }
      }
      // The size estimate differs a little between replicas; the panel reads the highest.
      for (const [k, instance] of INSTANCES.entries()) {
        const bytes = r.bytes + k * 7 + upTo(40);
        b.gauge("apiserver_resource_size_estimate_bytes", { job, instance, ...rl }, slotEnd, bytes);
        events.push({ t: slotEnd, kind: "size", ...rl, instance, value: bytes });
      }
    }
    for (const instance of INSTANCES) {
      const equal = upTo(2);
      for (let i = 0; i < equal; i++) {
        const t = at();
        b.observe("apiserver_request_timestamp_comparison_time", { job, instance, code_path: "equal_objects" }, [0.0001, 0.001, 0.01], t, 0);
        events.push({ t, kind: "equal-objects" });
      }
      b.observe("apiserver_request_timestamp_comparison_time", { job, instance, code_path: "unequal_objects_fast" }, [0.0001, 0.001, 0.01], at(), 0);
    }
    for (const c of CONSUMERS) {
      const n = upTo(c.perInterval);
      for (let i = 0; i < n; i++) {
        const t = at();
        b.count(c.metric, { job: c.consumer.toLowerCase().replace(" ", "-"), ...c.labels }, t);
        events.push({ t, kind: "consumer-noop", consumer: c.consumer });
      }
    }
    // The 1.33 API server: writes and watch events by kind only.
    b.count(
      "apiserver_request_total",
      {
        job: OLD_SIGNALS_JOB,
        instance: "10.8.0.1:6443",
        verb: "PUT",
        resource: "leases",
        group: "coordination.k8s.io",
        version: "v1",
        scope: "resource",
        component: "apiserver",
        code: "200",
      },
      at(),
    );
    b.count(
      "apiserver_watch_events_total",
      { job: OLD_SIGNALS_JOB, instance: "10.8.0.1:6443", group: "coordination.k8s.io", version: "v1", kind: "Lease" },
      at(),
    );
    b.count("etcd_requests_total", { job: OLD_SIGNALS_JOB, instance: "10.8.0.1:6443", operation: "update", type: "leases.coordination.k8s.io" }, at());
  }
  return { series: b.build(), events };
}

/** Events of a kind in (t − w, t], optionally of one resource. */
export function eventsIn(
  s: SignalsScenario,
  kind: SignalEvent["kind"],
  tSeconds: number,
  windowSeconds: number,
  where: (e: SignalEvent) => boolean = () => true,
) {
  return s.events.filter((e) => e.kind === kind && e.t > tSeconds - windowSeconds && e.t <= tSeconds && where(e));
}
