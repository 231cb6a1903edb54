/**
 * The server's long-lived handles, built once per process (the one value it keeps per process): the
 * validated configuration, the Prometheus client, a short-lived cache of label-set probes, the
 * snapshot and object stores, and the recorder. Building opens nothing; startServer (start.ts) opens
 * the live store and starts recording. Server-side only; nothing here is sent to browsers.
 */
import { detectFlavor, detectWindows, type EngineTraits, type Flavor, type WindowSemantics } from "../promql/flavor";
import { join } from "node:path";
import { loadConfig, type AppConfig } from "../config/load";
import { createPromClient } from "../prometheus/client";
import { forCaller, sharedClient, type SharedClient } from "../prometheus/shared-client";
import { probeLabelSets, type LabelSets } from "../panels/probe";
import { SnapshotStore } from "../snapshot/store";
import { FileBundles } from "../snapshot/bundles";
import { NoteStore } from "../store/notes";
import { EngineBundles } from "../store/snapshot-bundles";
import { OpenedAtStart } from "../runtime/opened-at-start";
import { detectRebuildProfile, type DetectedProfile } from "../rebuilds/detect";
import { existing, perProcess } from "../runtime/per-process";
import type { Recorder } from "../recorder/recorder";
import { liveObjectStore, ObjectStores } from "../store/sources";

export interface ServerContext {
  config: AppConfig;
  snapshots: SnapshotStore;
  /** the live store (opened at start) and each snapshot's object store */
  stores: ObjectStores;
  /** the in-process recorder: undefined until the start decides, null when there is nothing to record */
  recording: { recorder?: Recorder | null };
  /** opened at start (a 503 until it has) */
  notesStore: OpenedAtStart<NoteStore>;
  prometheus: {
    /** shares identical calls and bounds them; its counters are on /metrics */
    client: SharedClient;
    scrapeIntervalSeconds: number;
    /** the labels that tell components apart in client-go's own metrics */
    componentLabels: string[];
    probe: (job: string | undefined, bounds: { startSeconds: number; endSeconds: number }, signal?: AbortSignal) => Promise<LabelSets>;
    detectRebuilds: (bounds: { startSeconds: number; endSeconds: number }, signal?: AbortSignal) => Promise<DetectedProfile | null>;
    /** the engine behind prometheus.url (configured, or detected once and kept) */
    /** which engine answers, how it reads windows, and what Thanos may read (flavor.ts) */
    engine: (signal?: AbortSignal) => Promise<EngineTraits>;
    /** what /readyz says of it: the configured flavor, the last one detected, or that none is yet */
    flavorShown: () => string;
  } | null;
}

const PROBE_TTL_MS = 5 * 60_000;

export function getServerContext(): ServerContext {
  return perProcess("serverContext", () => buildContext(loadConfig()));
}

/**
 * Liveness: whether the process can still make progress. Every Prometheus call gives its slot back at
 * its deadline, so a slot held well past it means the query pool is stuck (as an answer that never
 * ended once made it) and every panel would hang: restarting is the cure. A slow or failing
 * Prometheus is not that; it shows on the panels.
 */
export function liveness(): { live: boolean; reason?: string } {
  const ctx = existing<ServerContext>("serverContext");
  if (!ctx?.prometheus || !ctx.config.prometheus) return { live: true };
  const heldMs = ctx.prometheus.client.oldestActiveMs();
  const limitMs = ctx.config.prometheus.timeoutMs + STUCK_GRACE_MS;
  if (heldMs <= limitMs) return { live: true };
  return {
    live: false,
    reason: `a Prometheus query slot has been held for ${Math.round(heldMs / 1000)} s, past its ${ctx.config.prometheus.timeoutMs / 1000} s deadline`,
  };
}

/** How long past its deadline a call may hold its slot (a busy event loop) before the pool counts as stuck. */
const STUCK_GRACE_MS = 30_000;

/**
 * Answers about what Prometheus holds, kept for PROBE_TTL_MS when `keep` says so (a failure never is).
 * One lookup serves every caller, so no caller's abort or deadline is part of it; each waits with its own.
 */
function kept<T>(keep: (value: T) => boolean): (key: string, ask: () => Promise<T>, signal?: AbortSignal) => Promise<T> {
  const entries = new Map<string, { atMs: number; value: Promise<T> }>();
  return (key, ask, signal) => {
    const hit = entries.get(key);
    if (hit && Date.now() - hit.atMs < PROBE_TTL_MS) return forCaller(hit.value, signal);
    const value = ask();
    entries.set(key, { atMs: Date.now(), value });
    value.then(
      (found) => keep(found) || entries.delete(key),
      () => entries.delete(key),
    );
    return forCaller(value, signal);
  };
}

export function buildContext(config: AppConfig): ServerContext {
  // On PostgreSQL, uploaded snapshots and notes are in the live store's database, where every replica finds them.
  const live = liveObjectStore(config);
  const onPostgres = config.store.engine === "postgres";
  // A request meanwhile is a 503 that says the store is not open; the start opens it (and retries).
  const bundles = onPostgres ? new EngineBundles(async () => live.get().database.engine) : new FileBundles(join(config.dataDir, "snapshots"));
  const snapshots = new SnapshotStore(bundles, config.limits.maxSnapshotBytes, {
    checkHeapMiB: config.limits.snapshotCheckMiB,
    concurrentChecks: config.limits.concurrentSnapshotChecks,
    queuedChecks: config.limits.queuedSnapshotChecks,
  });
  const notesStore = new OpenedAtStart("the notes store", async () =>
    onPostgres ? NoteStore.in((await live.open()).database.engine) : NoteStore.sqlite(join(config.dataDir, "notes.sqlite")),
  );
  const stores = new ObjectStores({ config, snapshots }, live);
  const recording = {};
  if (!config.prometheus) return { config, snapshots, stores, recording, notesStore, prometheus: null };
  const client = sharedClient(createPromClient(config.prometheus), config.prometheus.sharing);
  const labelSets = kept<LabelSets>(() => true);
  // The engine rarely changes behind a URL: a detection is kept (a failed one is asked again).
  const configuredFlavor = config.prometheus.flavor;
  const flavors = kept<Flavor | null>((found) => found !== null);
  let detected: Flavor | undefined;
  const flavor = async (signal?: AbortSignal): Promise<Flavor> => {
    if (configuredFlavor !== "auto") return configuredFlavor;
    const found = await flavors("flavor", () => detectFlavor(client), signal);
    if (found) detected = found;
    return found ?? "prometheus";
  };
  // Asked of the engine; not known yet: Prometheus 2's.
  const windowsKept = kept<WindowSemantics | null>((found) => found !== null);
  const engine = async (signal?: AbortSignal): Promise<EngineTraits> => {
    const found = await flavor(signal);
    const windows = await windowsKept(found, () => detectWindows(client, found), signal);
    return { flavor: found, windows: windows ?? "closed", sourceResolution: config.prometheus!.maxSourceResolution };
  };
  const flavorShown = () => (configuredFlavor !== "auto" ? `${configuredFlavor} (configured)` : detected ? `${detected} (detected)` : "not detected yet");
  const probe: NonNullable<ServerContext["prometheus"]>["probe"] = (job, bounds, signal) =>
    labelSets(job ?? "\u0000all", () => probeLabelSets(client, job, bounds), signal);
  // Which rebuild metrics exist rarely changes; ask again per hour of range and every few minutes. Only a profile found is
  // kept: an absence is asked again, so a failing Prometheus shows as an error, never as "no metrics".
  const detections = kept<DetectedProfile | null>((found) => found !== null);
  const detectRebuilds: NonNullable<ServerContext["prometheus"]>["detectRebuilds"] = (bounds, signal) =>
    detections(
      `${Math.floor(bounds.startSeconds / 3600)}-${Math.ceil(bounds.endSeconds / 3600)}`,
      () => detectRebuildProfile(client, bounds, config.rebuilds.profile),
      signal,
    );
  return {
    config,
    snapshots,
    stores,
    recording,
    notesStore,
    prometheus: {
      detectRebuilds,
      client,
      scrapeIntervalSeconds: config.prometheus.scrapeIntervalSeconds,
      componentLabels: config.componentLabels,
      probe,
      engine,
      flavorShown,
    },
  };
}
