/**
 * Kubernetes renamed the labels of the etcd and watch metrics more than once (Go types up to 1.25, dotted
 * resource names up to 1.33, group and resource apart from 1.34), and added storage events in 1.30.
 * Rather than guess the version, ask Prometheus which labels one series of each family carries.
 */
import type { PromClient, TimeBounds } from "../promql/types";
import { selector } from "../promql/promql";

export type EtcdCounter = "etcd_requests_total" | "etcd_request_duration_seconds_count";

export interface LabelSets {
  /** ≥ 1.34: group+resource; 1.26–1.33: type="<resource>.<group>"; ≤ 1.25: type="*<package>.<Kind>" (go-type); none: not scraped. */
  etcd: "group-resource" | "type" | "go-type" | "none";
  /**
   * The counter of etcd requests: etcd_requests_total from 1.28, before that only the request-duration
   * histogram's count (same labels); absent means etcd_requests_total.
   */
  etcdCounter?: EtcdCounter;
  /** ≥ 1.34: group+resource; 1.27–1.33: resource="<resource>.<group>"; none: not scraped (≤ 1.26). */
  watchCache: "group-resource" | "resource" | "none";
  /** ≥ 1.34: resource; ≤ 1.33: kind. */
  watchEvents: "resource" | "kind" | "none";
  /**
   * apiserver_storage_events_received_total, the events etcd really produced: from 1.34 with group and
   * resource, 1.30–1.33 with resource="<resource>.<group>"; absent means not scraped.
   */
  storageEvents?: "group-resource" | "resource" | "none";
}

async function firstSeriesLabels(client: PromClient, metric: string, job: string | undefined, bounds: TimeBounds, signal?: AbortSignal) {
  const match = selector(metric, [job === undefined ? undefined : { label: "job", op: "=", value: job }]);
  const result = await client.series([match], { ...bounds, limit: 1 }, signal);
  return result.data[0];
}

export async function probeLabelSets(client: PromClient, job: string | undefined, bounds: TimeBounds, signal?: AbortSignal): Promise<LabelSets> {
  const [requests, cache, watch] = await Promise.all([
    firstSeriesLabels(client, "etcd_requests_total", job, bounds, signal),
    firstSeriesLabels(client, "apiserver_watch_cache_events_received_total", job, bounds, signal),
    firstSeriesLabels(client, "apiserver_watch_events_total", job, bounds, signal),
  ]);
  // Asked after the first three, so a probe never takes more than three query slots (a smaller pool could never answer it).
  const storage = await firstSeriesLabels(client, "apiserver_storage_events_received_total", job, bounds, signal);
  // Asked only where etcd_requests_total is missing (before 1.28).
  const durations = requests ? undefined : await firstSeriesLabels(client, "etcd_request_duration_seconds_count", job, bounds, signal);
  const etcd = requests ?? durations;
  return {
    etcdCounter: requests || !durations ? "etcd_requests_total" : "etcd_request_duration_seconds_count",
    etcd: !etcd ? "none" : "resource" in etcd ? "group-resource" : "type" in etcd ? (etcd.type.startsWith("*") ? "go-type" : "type") : "none",
    watchCache: !cache ? "none" : "group" in cache ? "group-resource" : "resource",
    watchEvents: !watch ? "none" : "kind" in watch && !("resource" in watch) ? "kind" : "resource",
    storageEvents: !storage ? "none" : "group" in storage ? "group-resource" : "resource",
  };
}
