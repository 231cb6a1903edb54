/**
 * Alert storms: when fifty people open the same alert link, Prometheus should answer each panel's
 * query once. This wraps a PromClient so identical requests in flight share one upstream call,
 * answers are reused for a few seconds (callers align ranges to the step, so the same view asks the
 * same question), failures are never reused, and at most `maxConcurrent` calls run at once with at
 * most `maxQueued` waiting; past that a request fails fast as "busy" instead of piling up. Each call's
 * deadline (`timeoutMs`) runs from when it was asked for, waiting included, and a call past it gives
 * its slot back whatever became of it, so no answer can hold the pool.
 */
import { ApiFailure } from "../api/envelope";
import { Gate } from "../api/gate";
import type { PromClient } from "../promql/types";
import { PromError } from "../promql/errors";

export interface SharingOptions {
  cacheMs: number;
  maxConcurrent: number;
  maxQueued: number;
  /** a call's whole time, from being asked for to its answer */
  timeoutMs: number;
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

export type SharedClient = PromClient & {
  stats: SharingStats;
  active: () => number;
  queued: () => number;
  /** how long the oldest call holding a slot has held it (0: none); past its deadline and some, the pool is stuck */
  oldestActiveMs: () => number;
};

export function sharedClient(inner: PromClient, options: SharingOptions, clock: () => number = Date.now): SharedClient {
  const stats: SharingStats = { upstream: 0, coalesced: 0, cached: 0, busy: 0 };
  const entries = new Map<string, { promise: Promise<unknown>; settledAtMs?: number }>();
  const seconds = `${options.timeoutMs / 1000} s`;
  const gate = new Gate(
    options.maxConcurrent,
    options.maxQueued,
    (running, waiting) => {
      stats.busy++;
      return new ApiFailure(
        503,
        "busy",
        `Prometheus is busy: ${running} queries are running and ${waiting} are waiting (prometheus.maxConcurrentQueries). Try again in a moment.`,
      );
    },
    clock,
  );

  /** One upstream call, within its deadline from when it was asked for, waiting for a slot included. */
  function limited<T>(work: (deadline: AbortSignal) => Promise<T>): Promise<T> {
    const signal = AbortSignal.timeout(options.timeoutMs);
    return gate.run(() => work(signal), {
      signal,
      waited: () =>
        new PromError(
          "timeout",
          `no Prometheus query slot came free within ${seconds} (prometheus.timeoutSeconds; ${options.maxConcurrent} run at once, prometheus.maxConcurrentQueries)`,
        ),
      overran: () => new PromError("timeout", `Prometheus did not answer within ${seconds}`),
    });
  }

  function sweep(nowMs: number) {
    for (const [key, entry] of entries) {
      if (entry.settledAtMs !== undefined && (nowMs - entry.settledAtMs >= options.cacheMs || entries.size > MAX_ENTRIES)) entries.delete(key);
    }
  }

  function shared<T>(key: string, call: (deadline: AbortSignal) => Promise<T>, signal?: AbortSignal): Promise<T> {
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
    active: () => gate.active,
    queued: () => gate.queued,
    oldestActiveMs: () => gate.oldestRunningMs(),
    query: (expr, time, signal) => shared(key("query", expr, time), (d) => inner.query(expr, time, d), signal),
    queryRange: (expr, range, signal) =>
      shared(key("range", expr, range.startSeconds, range.endSeconds, range.stepSeconds), (d) => inner.queryRange(expr, range, d), signal),
    series: (match, bounds, signal) => shared(key("series", match, bounds), (d) => inner.series(match, bounds, d), signal),
    labels: (match, bounds, signal) => shared(key("labels", match, bounds), (d) => inner.labels(match, bounds, d), signal),
    labelValues: (label, match, bounds, signal) => shared(key("values", label, match, bounds), (d) => inner.labelValues(label, match, bounds, d), signal),
    metadata: (metric, signal) => shared(key("metadata", metric), (d) => inner.metadata(metric, d), signal),
    thanosStores: (signal) => inner.thanosStores(signal),
  };
}

/** The shared answer, or this caller's abort if it comes first. */
export function forCaller<T>(promise: Promise<T>, signal?: AbortSignal): Promise<T> {
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
