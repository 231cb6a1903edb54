/**
 * Alert storms: when fifty people open the same alert link, Prometheus should answer each panel's
 * query once. This wraps a PromClient so identical requests in flight share one upstream call,
 * answers are reused for a few seconds (callers align ranges to the step, so the same view asks the
 * same question), failures are never reused, and at most `maxConcurrent` calls run at once with at
 * most `maxQueued` waiting; past that a request fails fast as "busy" instead of piling up.
 */
import { ApiFailure } from "../api/envelope";
import type { PromClient } from "./client";

export interface SharingOptions {
  cacheMs: number;
  maxConcurrent: number;
  maxQueued: number;
}

export interface SharingStats {
  /** calls sent to Prometheus */
  upstream: number;
  /** requests that joined a call already in flight */
  coalesced: number;
  /** requests answered from a recent answer */
  cached: number;
  /** requests refused because too many were waiting */
  busy: number;
}

const MAX_ENTRIES = 2_000;

export type SharedClient = PromClient & { stats: SharingStats; active: () => number; queued: () => number };

export function sharedClient(inner: PromClient, options: SharingOptions, clock: () => number = Date.now): SharedClient {
  const stats: SharingStats = { upstream: 0, coalesced: 0, cached: 0, busy: 0 };
  const entries = new Map<string, { promise: Promise<unknown>; settledAtMs?: number }>();
  const waiting: (() => void)[] = [];
  let active = 0;

  const release = () => {
    active--;
    waiting.shift()?.();
  };
  async function limited<T>(work: () => Promise<T>): Promise<T> {
    if (active >= options.maxConcurrent) {
      if (waiting.length >= options.maxQueued) {
        stats.busy++;
        throw new ApiFailure(
          503,
          "busy",
          `Prometheus is busy: ${active} queries are running and ${waiting.length} are waiting (prometheus.maxConcurrentQueries). Try again in a moment.`,
        );
      }
      await new Promise<void>((resolve) => waiting.push(resolve));
    }
    active++;
    try {
      return await work();
    } finally {
      release();
    }
  }

  function sweep(nowMs: number) {
    for (const [key, entry] of entries) {
      if (entry.settledAtMs !== undefined && (nowMs - entry.settledAtMs >= options.cacheMs || entries.size > MAX_ENTRIES)) entries.delete(key);
    }
  }

  function shared<T>(key: string, call: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    const nowMs = clock();
    const hit = entries.get(key);
    if (hit && (hit.settledAtMs === undefined || nowMs - hit.settledAtMs < options.cacheMs)) {
      if (hit.settledAtMs === undefined) stats.coalesced++;
      else stats.cached++;
      return forCaller(hit.promise as Promise<T>, signal);
    }
    stats.upstream++;
    // The upstream call is shared, so no single caller's abort cancels it; the client's own timeout still applies.
    const entry: { promise: Promise<unknown>; settledAtMs?: number } = { promise: limited(call) };
    entries.set(key, entry);
    entry.promise.then(
      () => {
        entry.settledAtMs = clock();
        sweep(entry.settledAtMs);
      },
      () => {
        if (entries.get(key) === entry) entries.delete(key);
      },
    );
    return forCaller(entry.promise as Promise<T>, signal);
  }

  const key = (...parts: unknown[]) => JSON.stringify(parts);
  return {
    stats,
    active: () => active,
    queued: () => waiting.length,
    query: (expr, time, signal) => shared(key("query", expr, time), () => inner.query(expr, time), signal),
    queryRange: (expr, range, signal) => shared(key("range", expr, range.startSeconds, range.endSeconds, range.stepSeconds), () => inner.queryRange(expr, range), signal),
    series: (match, bounds, signal) => shared(key("series", match, bounds), () => inner.series(match, bounds), signal),
    labels: (match, bounds, signal) => shared(key("labels", match, bounds), () => inner.labels(match, bounds), signal),
    labelValues: (label, match, bounds, signal) => shared(key("values", label, match, bounds), () => inner.labelValues(label, match, bounds), signal),
    metadata: (metric, signal) => shared(key("metadata", metric), () => inner.metadata(metric), signal),
  };
}

/** The shared answer, or this caller's abort if it comes first. */
function forCaller<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
  if (!signal) return promise;
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener("abort", onAbort, { once: true });
    promise.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (error) => {
        signal.removeEventListener("abort", onAbort);
        reject(error);
      },
    );
  });
}
