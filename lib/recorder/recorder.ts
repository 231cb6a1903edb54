/**
 * The recorder: one watcher per (cluster, profile), the store's retention, and its own metrics.
 * Clusters come from the config; with none listed it records the kubeconfig's current context
 * (or the pod's service account in a cluster), named after the context, as kubectl would.
 */
import { Exposition } from "../metrics/exposition";
import { KubeConfig } from "@kubernetes/client-node";
import type { AppConfig } from "../config/load";
import type { WriteStore } from "../store/store";
import type { Profile } from "../churn/profiles";
import { resourceKey } from "./core";
import { LEASE_TIMING, leadCluster, type LeaseTiming } from "./leadership";
import { runWatcher, type WatcherStats } from "./watcher";

export interface RecordedCluster {
  name: string;
  kc: KubeConfig;
}

/** The clusters to record, or none when neither the config nor the environment names one. */
export function clustersToRecord(config: AppConfig, env: Record<string, string | undefined> = process.env): RecordedCluster[] {
  if (config.clusters.length > 0) {
    return config.clusters.map((c) => {
      const kc = new KubeConfig();
      if (c.inCluster) kc.loadFromCluster();
      else if (c.kubeconfig) kc.loadFromFile(c.kubeconfig);
      else kc.loadFromDefault();
      if (c.context) kc.setCurrentContext(c.context);
      return { name: c.name, kc };
    });
  }
  if (env.KUBECONFIG) {
    const kc = new KubeConfig();
    kc.loadFromDefault();
    return kc.getCurrentContext() ? [{ name: kc.getCurrentContext(), kc }] : [];
  }
  if (env.KUBERNETES_SERVICE_HOST) {
    const kc = new KubeConfig();
    kc.loadFromCluster();
    return [{ name: "in-cluster", kc }];
  }
  return [];
}

export interface Recorder {
  stop(): Promise<void>;
  /** the watchers this process runs now (those of the clusters whose lease it holds) */
  stats(): { cluster: string; resource: string; stats: WatcherStats }[];
  /** whether this process records each cluster now */
  leading(): { cluster: string; leads: boolean }[];
}

/**
 * `rollUp`: also keep the Objects rollups, as `npm run recorder` does; the dashboard, recording
 * in-process, has its own roll-up thread for that.
 */
export function startRecorder(
  config: AppConfig,
  store: WriteStore,
  clusters: RecordedCluster[],
  log: (line: string) => void = console.log,
  rollUp = true,
  timing: LeaseTiming = LEASE_TIMING,
): Recorder {
  const watchers = new Set<{ cluster: string; resource: string; stats: WatcherStats; done: Promise<void> }>();
  /** One watch per resource of the cluster, however many profiles read it, until the returned stop. */
  const record = (cluster: RecordedCluster, guard: () => Promise<void>, takeover: boolean) => {
    const controller = new AbortController();
    const byResource = new Map<string, Profile[]>();
    for (const profile of config.profiles.filter((p) => p.clusters.length === 0 || p.clusters.includes(cluster.name))) {
      byResource.set(resourceKey(profile), [...(byResource.get(resourceKey(profile)) ?? []), profile]);
    }
    const mine: typeof watchers = new Set();
    for (const [resource, profiles] of byResource) {
      const stats: WatcherStats = { events: 0, stored: 0, relists: 0, reconnects: 0, rejected: 0, lastEventMs: 0, state: "starting" };
      const options = {
        kc: cluster.kc,
        store,
        cluster: cluster.name,
        profiles,
        guard,
        takeover,
        unservedRetryMs: config.recorder.unservedRetrySeconds * 1000,
        log: (line: string) => log(`recorder: ${cluster.name}: ${resource}: ${line}`),
      };
      const done = runWatcher(options, controller.signal, stats).catch((error: Error) =>
        log(`recorder: ${cluster.name}: ${resource}: stopped: ${error.message}`),
      );
      mine.add({ cluster: cluster.name, resource, stats, done });
    }
    mine.forEach((w) => watchers.add(w));
    return async () => {
      controller.abort();
      await Promise.all([...mine].map((w) => w.done));
      mine.forEach((w) => watchers.delete(w));
    };
  };
  const leaderships = clusters.map((cluster) => ({
    cluster: cluster.name,
    leadership: leadCluster(
      store.leases(),
      cluster.name,
      (guard, takeover) => record(cluster, guard, takeover),
      (line) => log(`recorder: ${line}`),
      timing,
    ),
  }));
  const retentionMs = config.recorder.retentionDays * 86_400_000;
  // Retention at once, then hourly.
  const prune = () => store.prune(Date.now() - retentionMs).catch((error: Error) => log(`recorder: retention: ${error.message}`));
  void prune();
  const timer = setInterval(() => void prune(), 3_600_000);
  timer.unref();
  // The Objects rollups as quarter hours fall due, the same way the dashboard's roll-up thread keeps them.
  const stopRolling = rollUp ? store.keepRolledUp((error) => log(`recorder: objects rollups: ${error.message}`)) : () => {};
  return {
    async stop() {
      stopRolling();
      clearInterval(timer);
      await Promise.all(leaderships.map(({ leadership }) => leadership.stop()));
    },
    stats: () => [...watchers].map(({ cluster, resource, stats }) => ({ cluster, resource, stats })),
    leading: () => leaderships.map(({ cluster, leadership }) => ({ cluster, leads: leadership.leads() })),
  };
}

/** Prometheus text for the recorder's own health. */
export async function recorderMetrics(recorder: Recorder, store: WriteStore, nowMs = Date.now(), out = new Exposition()): Promise<Exposition> {
  const openGaps = (await store.gaps(0, nowMs + 1)).filter((g) => g.toMs === null).length;
  const storeBytes = await store.sizeBytes();
  const stats = recorder.stats();
  const per = (pick: (s: WatcherStats) => number) =>
    stats.map(({ cluster, resource, stats: s }): [Record<string, string>, number] => [{ cluster, resource }, pick(s)]);
  return out
    .family(
      "churnscope_recorder_events_total",
      "counter",
      "Watch events received (bookmarks included).",
      per((s) => s.events),
    )
    .family(
      "churnscope_recorder_versions_stored_total",
      "counter",
      "New object versions diffed, classified and stored.",
      per((s) => s.stored),
    )
    .family(
      "churnscope_recorder_relists_total",
      "counter",
      "Full lists (the first one, and each after 410 Gone).",
      per((s) => s.relists),
    )
    .family(
      "churnscope_recorder_reconnects_total",
      "counter",
      "Watches reopened after a disconnect or a server timeout.",
      per((s) => s.reconnects),
    )
    .family(
      "churnscope_recorder_events_rejected_total",
      "counter",
      "Watch events skipped: not a recordable object change or bookmark.",
      per((s) => s.rejected),
    )
    .family(
      "churnscope_recorder_lag_seconds",
      "gauge",
      "Seconds since the last watch event or bookmark.",
      per((s) => (s.lastEventMs ? (nowMs - s.lastEventMs) / 1000 : -1)),
    )
    .family(
      "churnscope_recorder_watching",
      "gauge",
      "1 while the watch is open.",
      per((s) => (s.state === "watching" ? 1 : 0)),
    )
    .family(
      "churnscope_recorder_leader",
      "gauge",
      "1 while this process records the cluster (holds its lease in the store); another replica records it otherwise.",
      recorder.leading().map(({ cluster, leads }): [Record<string, string>, number] => [{ cluster }, leads ? 1 : 0]),
    )
    .family("churnscope_recorder_open_gaps", "gauge", "Periods the recorder could not observe that are still open.", [[{}, openGaps]])
    .family("churnscope_store_bytes", "gauge", "Size of the store's database (its SQLite file, or the PostgreSQL database).", [[{}, storeBytes]]);
}
