/**
 * The recorder's I/O shell for one profile on one cluster: list, then watch with bookmarks from the
 * list's resourceVersion; on a dropped connection resume from the last version seen (with backoff),
 * on 410 Gone relist and reconcile. Every period it could not observe is stored as a gap. It only
 * ever lists and watches.
 */
import { HttpMethod, RequestContext, Watch, type KubeConfig } from "@kubernetes/client-node";
import { fetch } from "undici";
import type { Profile } from "../churn/profiles";
import type { WriteStore } from "../store/store";
import { Turns } from "../runtime/turns";
import { LeaseLost } from "../store/leases";
import { namedObject, ProfileRecorder, readableEvent, resourceKey, type KubeObject } from "./core";

/** Watch events waiting to be stored, at most: past it the watch ends and resumes from the last version stored (100 k events of a few KiB). */
export const MAX_QUEUED_EVENTS = 100_000;

export interface WatcherStats {
  events: number;
  stored: number;
  relists: number;
  reconnects: number;
  /** events that were not a recordable change or bookmark, and were skipped (see readableEvent) */
  rejected: number;
  /** when the last event or bookmark arrived */
  lastEventMs: number;
  state: "starting" | "watching" | "backoff" | "stopped" | "unserved";
  error?: string;
}

export function resourcePath(profile: Profile): string {
  return profile.group === "" ? `/api/${profile.version}/${profile.resource}` : `/apis/${profile.group}/${profile.version}/${profile.resource}`;
}

class Gone extends Error {}
class NoStreamingLists extends Error {}

/**
 * A paged list. Its items come without `kind` and `apiVersion` (a List names them once), while watch
 * events carry both: they are filled in, so the next event does not read as a change to them.
 */
async function list(kc: KubeConfig, profile: Profile, signal: AbortSignal): Promise<{ items: KubeObject[]; resourceVersion: string }> {
  const path = resourcePath(profile);
  const typeMeta = { apiVersion: profile.group === "" ? profile.version : `${profile.group}/${profile.version}`, kind: profile.kind };
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error("the kubeconfig has no current cluster");
  const items: KubeObject[] = [];
  let continueToken: string | undefined;
  let resourceVersion = "";
  do {
    const url = new URL(cluster.server + path);
    url.searchParams.set("limit", "500");
    if (continueToken) url.searchParams.set("continue", continueToken);
    const ctx = new RequestContext(url.toString(), HttpMethod.GET);
    await kc.applySecurityAuthentication(ctx);
    const response = await fetch(url, { headers: ctx.getHeaders(), dispatcher: ctx.getDispatcher(), signal });
    if (response.status === 410) throw new Gone("list continue token expired");
    if (response.status === 404) throw Object.assign(new Error(`${path} is not served (CRD not installed?)`), { unserved: true });
    if (!response.ok) throw new Error(`list ${path}: HTTP ${response.status}`);
    const body = (await response.json()) as { items?: KubeObject[]; metadata?: { resourceVersion?: string; continue?: string } };
    for (const item of body.items ?? []) items.push(namedObject(item) ? { ...typeMeta, ...item } : item);
    resourceVersion = body.metadata?.resourceVersion ?? resourceVersion;
    continueToken = body.metadata?.continue || undefined;
  } while (continueToken);
  return { items, resourceVersion };
}

export interface WatcherOptions {
  kc: KubeConfig;
  store: WriteStore;
  cluster: string;
  /** profiles of one resource */
  profiles: Profile[];
  now?: () => number;
  minBackoffMs?: number;
  maxBackoffMs?: number;
  /** list through a streaming watch where the server offers it (default), else page through a list */
  streamingLists?: boolean;
  /** runs first in every transaction: throws LeaseLost once this process may no longer record the cluster */
  guard?: () => Promise<void>;
  /** how long to wait before asking again for a resource the server does not serve (a CRD installed later is then recorded) */
  unservedRetryMs?: number;
  /** says when the resource turns out not to be served, and when it is again */
  log?: (line: string) => void;
  /**
   * This process took the cluster over (from another replica, or from itself before a restart): what was recorded is
   * not resumed but listed again, and the time since it was last observed is a gap.
   */
  takeover?: boolean;
}

/** Waits `ms`, or less if `signal` aborts first. */
function sleepUnless(signal: AbortSignal, ms: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    }
    signal.addEventListener("abort", done, { once: true });
  });
}

/** Records until `signal` aborts. Resolves when stopped. */
export async function runWatcher(options: WatcherOptions, signal: AbortSignal, stats: WatcherStats): Promise<void> {
  const { kc, store, cluster, profiles } = options;
  const now = options.now ?? Date.now;
  const guard = options.guard ?? (() => Promise.resolve());
  const recorder = new ProfileRecorder(store, cluster, profiles, guard);
  const path = resourcePath(profiles[0]);
  const name = resourceKey(profiles[0]);
  /** A write outside the recorder's batches (a gap), made only while this process holds the cluster. */
  const guarded = (work: () => Promise<void>) => store.batch(async () => (await guard(), work()));
  const retrySeconds = (options.unservedRetryMs ?? 60_000) / 1000;
  const retryText = retrySeconds === 60 ? "minute" : `${retrySeconds} s`;
  const watching = () => {
    if (stats.state === "unserved") options.log?.(`${path} is served now: recording it`);
    stats.state = "watching";
    stats.error = undefined;
  };
  let backoffMs = options.minBackoffMs ?? 1000;
  let needList = (await recorder.resumeVersion()) === undefined;
  if (options.takeover && !needList) {
    // Resuming would stamp every version written meanwhile with the time it arrives now: list, and say what was missed.
    const fromMs = Math.min(now(), (await recorder.observedUntilMs()) ?? now());
    await guarded(() =>
      store.openGap(cluster, name, fromMs, "not recorded: the recording process changed (a restart, or another replica took over); relisted"),
    );
    needList = true;
  }
  // A streaming list (a watch that first sends every object) is served from the watch cache; servers
  // without it refuse the parameter (WatchList off) or ignore it (before 1.27), and then a paged list is used.
  let streamingLists = options.streamingLists ?? true;
  while (!signal.aborted) {
    const streaming = needList && streamingLists;
    try {
      if (needList && !streaming) {
        const listed = await list(kc, profiles[0], signal);
        const items = listed.items.filter(namedObject);
        stats.rejected += listed.items.length - items.length;
        stats.stored += await recorder.applyList(items, listed.resourceVersion, now());
        stats.relists++;
        needList = false;
      }
      if (!streaming) {
        await guarded(() => store.closeGap(cluster, name, now()));
        watching();
      }
      const resumeVersion = streaming ? undefined : await recorder.resumeVersion();
      await new Promise<void>((resolve, reject) => {
        const watch = new Watch(kc);
        // client-node aborts a watch after 30 s without data; bookmarks arrive about once a minute, so allow more.
        (watch as unknown as { requestTimeoutMs: number }).requestTimeoutMs = 5 * 60_000;
        let controller: AbortController | undefined;
        // Events that arrive in one burst are stored in one transaction, at the end of the current tick.
        let pending: { type: string; obj: KubeObject; tsMs: number }[] = [];
        // A streaming list's objects, until the bookmark that ends them
        let initial: KubeObject[] | undefined = streaming ? [] : undefined;
        let failed = false;
        // The store refused (one transaction: nothing of it was stored), and nothing after it may be
        // stored: end this watch; the next resumes from the last version stored, so the server sends them again.
        const fail = (error: unknown) => {
          if (failed) return;
          failed = true;
          controller?.abort();
          reject(new Error(`could not store watch events: ${(error as Error).message}`, { cause: error }));
        };
        // Batches are handed to the recorder as they come: each is compared while the one before it is stored, and
        // they are stored one after another, in order. Their answers are taken in the same order.
        const storing = new Turns();
        let queued = 0;
        const skip = (error: Error) => {
          // An event the profile cannot read: the others are stored, and this one skipped and counted rather than
          // met again on every resume.
          stats.rejected++;
          stats.error = `skipped a watch event: ${error.message}`;
        };
        const store1 = async (batch: typeof pending, applied: Promise<number>) => {
          try {
            if (!failed) stats.stored += await applied;
          } catch (error) {
            // The store refused, or the lease is gone: nothing of this batch or after it is stored.
            fail(error);
          } finally {
            queued -= batch.length;
          }
        };
        const flush = () => {
          if (pending.length === 0 || failed) return storing.ended();
          const batch = pending;
          pending = [];
          queued += batch.length;
          // A store that falls this far behind the watch ends it: the next resumes from the last version stored.
          if (queued > MAX_QUEUED_EVENTS) fail(new Error(`the store fell ${queued} events behind the watch`));
          const applied = recorder.applyEvents(batch, skip);
          applied.catch(() => undefined);
          return storing.run(() => store1(batch, applied));
        };
        const onAbort = () => controller?.abort();
        signal.addEventListener("abort", onAbort, { once: true });
        const params = streaming
          ? { allowWatchBookmarks: true, sendInitialEvents: true, resourceVersionMatch: "NotOlderThan" }
          : { allowWatchBookmarks: true, resourceVersion: resumeVersion };
        watch
          .watch(
            path,
            params,
            (type, obj: KubeObject & { code?: number }) => {
              stats.events++;
              stats.lastEventMs = now();
              if (type === "ERROR") {
                controller?.abort();
                void flush().then(() => reject(obj.code === 410 ? new Gone("watch: resourceVersion too old") : new Error(`watch error ${obj.code ?? ""}`)));
                return;
              }
              if (!readableEvent(type, obj)) {
                stats.rejected++;
                return;
              }
              if (initial) {
                const ended =
                  type === "BOOKMARK" && (obj.metadata as { annotations?: Record<string, string> }).annotations?.["k8s.io/initial-events-end"] === "true";
                if (type !== "ADDED" && !ended) {
                  // A server that ignores the parameter (before 1.27) watches instead: a bookmark or a change before
                  // the end of the initial objects says so. List the paged way from now on.
                  controller?.abort();
                  reject(new NoStreamingLists());
                  return;
                }
                if (type === "ADDED") initial.push(obj);
                else {
                  const objects = initial;
                  initial = undefined;
                  // Stored in turn with the events after it, which wait for it.
                  void storing.run(async () => {
                    if (failed) return;
                    try {
                      stats.stored += await recorder.applyList(objects, obj.metadata!.resourceVersion!, now());
                      stats.relists++;
                      needList = false;
                      await guarded(() => store.closeGap(cluster, name, now()));
                      watching();
                    } catch (error) {
                      fail(error);
                    }
                  });
                }
                return;
              }
              pending.push({ type, obj, tsMs: now() });
              if (pending.length === 1) setImmediate(() => void flush());
              else if (pending.length >= 1_000) void flush();
              if (type !== "BOOKMARK") backoffMs = options.minBackoffMs ?? 1000;
            },
            (err) => {
              signal.removeEventListener("abort", onAbort);
              void flush().then(() => (err && !signal.aborted ? reject(err) : resolve()));
            },
          )
          .then((c) => (controller = c))
          .catch(reject);
      });
      // The server ended the watch (a normal timeout): continue from the last version. A streaming list it ended
      // before its last object is started again.
      if (!signal.aborted) stats.reconnects++;
    } catch (error) {
      if (signal.aborted) break;
      // Another process records the cluster now: this one stops, and writes nothing more.
      if (error instanceof LeaseLost || (error as Error).cause instanceof LeaseLost) {
        stats.state = "stopped";
        stats.error = (error as Error).message;
        return;
      }
      const status = (error as { statusCode?: number }).statusCode;
      if (streaming && (status === 400 || status === 422 || error instanceof NoStreamingLists)) {
        streamingLists = false;
        continue;
      }
      if ((error as { unserved?: boolean }).unserved || (streaming && status === 404)) {
        // A CRD may be installed at any time (Flux or Argo CD after Churnscope): asked for again until it is served.
        if (stats.state !== "unserved") options.log?.(`${path} is not served (CRD not installed?): not recorded until it is; asked again every ${retryText}`);
        stats.state = "unserved";
        stats.error = `${path} is not served (CRD not installed?)`;
        needList = true;
        await sleepUnless(signal, options.unservedRetryMs ?? 60_000);
        continue;
      }
      try {
        // A resume point that is gone means versions may be lost since the recorder last observed, not since now.
        const fromMs = error instanceof Gone ? Math.min(now(), (await recorder.observedUntilMs()) ?? now()) : now();
        await guarded(() => store.openGap(cluster, name, fromMs, error instanceof Gone ? "410 Gone: relisting" : `disconnected: ${(error as Error).message}`));
      } catch (gapError) {
        if (gapError instanceof LeaseLost) {
          stats.state = "stopped";
          return;
        }
        // The store refuses writes (full, locked): the next round tries again, from the last version stored.
      }
      stats.error = (error as Error).message;
      if (error instanceof Gone) {
        needList = true;
        continue;
      }
      stats.state = "backoff";
      stats.reconnects++;
      await new Promise((r) => setTimeout(r, backoffMs));
      backoffMs = Math.min(backoffMs * 2, options.maxBackoffMs ?? 30_000);
    }
  }
  try {
    if (stats.state === "watching") await guarded(() => recorder.markObserved(now()));
  } catch {
    // The store refuses writes: the next start counts from the last event stored instead.
  }
  stats.state = "stopped";
}
