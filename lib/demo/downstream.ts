/**
 * Everything downstream of a project-side Connector write: the replicator mirroring the status into
 * the hub copy's upstream-status annotation, Karmada propagating each hub change to
 * every edge site, and each site's xDS runner rebuilding the whole configuration, one
 * rebuild at a time, coalescing whatever arrives while it is busy.
 */
import { cloneJson, sortedJson, type Json } from "../churn/json";
import type { Rng } from "../scenario/rng";
import { CONNECTOR_API, FIELDS, UPSTREAM_STATUS, hubConnector, touchManagedFields, type Obj } from "./objects";
import { edgeView } from "./project-side";
import type { ReplayParams } from "./params";
import { clientOf } from "./clients";
import { HUB_JOB, type ApiRequest, type ReplaySink, type ReplayWrite, type WriteClass } from "./types";
import type { ConnectorPlan } from "./world";

const NSO = "network-services-operator";
const HUB_CONFLICT_SHARE = 0.01;

export interface HubTarget {
  plan: ConnectorPlan;
  hubNamespace: string;
  hubIndex: number;
  initialHub: Obj | null;
  initialUpstream: Obj | null;
}

/** Hub copies written for one Connector, given its project-side writes in time order. */
export function replicate(target: HubTarget, upstreamWrites: ReplayWrite[], sink: ReplaySink, rng: Rng): void {
  let hub = target.initialHub;
  let upstream = target.initialUpstream;
  let next = 0;
  let pendingRunMs: number | null = null;
  const runs: number[] = [];
  for (const w of upstreamWrites) {
    // The workqueue holds one entry per key: a write before the queued run merges into it.
    if (pendingRunMs !== null && w.timeMs < pendingRunMs) continue;
    pendingRunMs = w.timeMs + 40 + Math.round(rng() * 360);
    runs.push(pendingRunMs);
  }
  for (const runMs of runs) {
    while (next < upstreamWrites.length && upstreamWrites[next].timeMs <= runMs) upstream = upstreamWrites[next++].object;
    const deleting = upstream === null || (upstream.metadata as Obj).deletionTimestamp !== undefined;
    const t = runMs + 15;
    if (deleting) {
      sink.reconciles.push({ timeMs: runMs, controller: "gateway_resource_replicator", result: "success" });
      if (hub) {
        hub = null;
        record(sink, target, t, "DELETE", "delete", "upstream-deleted", null);
      }
      continue;
    }
    const desired = hubConnector(upstream as Obj, target.hubNamespace, target.plan.anchorUid, target.plan.hubUid);
    if (hub && sameCopy(hub, desired)) {
      sink.reconciles.push({ timeMs: runMs, controller: "gateway_resource_replicator", result: "success" });
      continue;
    }
    if (hub && rng() < HUB_CONFLICT_SHARE) {
      sink.requests.push(hubRequest(target, t - 300, "PUT", 409));
      sink.reconciles.push({ timeMs: t - 300, controller: "gateway_resource_replicator", result: "error" });
    }
    sink.reconciles.push({ timeMs: runMs, controller: "gateway_resource_replicator", result: "success" });
    const written = hub
      ? { ...cloneJson(hub), metadata: { ...(hub.metadata as Obj), annotations: (desired.metadata as Obj).annotations }, spec: desired.spec }
      : desired;
    touchManagedFields(written, { manager: NSO, operation: "Update", fields: FIELDS.hubCopy }, t);
    const cls: WriteClass = hub === null ? "create" : edgeView(annotationStatus(hub)) === edgeView(annotationStatus(written)) ? "unrouted" : "routed";
    record(sink, target, t, hub ? "PUT" : "POST", cls, "replicated", written);
    hub = written;
  }
}

function annotationStatus(hub: Obj): Json {
  const raw = ((hub.metadata as Obj).annotations as Obj | undefined)?.[UPSTREAM_STATUS];
  return typeof raw === "string" ? (JSON.parse(raw) as Json) : null;
}

function sameCopy(a: Obj, b: Obj): boolean {
  const view = (o: Obj) =>
    sortedJson({ annotations: (o.metadata as Obj).annotations ?? null, labels: (o.metadata as Obj).labels ?? null, spec: o.spec ?? null } as Json);
  return view(a) === view(b);
}

function record(sink: ReplaySink, target: HubTarget, t: number, verb: "POST" | "PUT" | "DELETE", cls: WriteClass, cause: string, object: Obj | null): void {
  sink.writes.push({ timeMs: t, objectIndex: target.hubIndex, verb, manager: NSO, cls, cause, object: object && cloneJson(object) });
  sink.requests.push(hubRequest(target, t, verb, verb === "POST" ? 201 : 200));
}

function hubRequest(target: HubTarget, t: number, verb: string, code: number): ApiRequest {
  const [group, version] = CONNECTOR_API.split("/");
  const { namespace, name } = target.plan;
  return {
    timeMs: t,
    job: HUB_JOB,
    resource: "connectors",
    group,
    version,
    verb,
    code,
    namespace: target.hubNamespace,
    name,
    ...clientOf(NSO, "hub", namespace, name, t),
  };
}

/** Poisson arrival times at `perHour` in [startMs, endMs). */
export function poissonTimes(perHour: number, startMs: number, endMs: number, rng: Rng): number[] {
  const out: number[] = [];
  if (perHour <= 0) return out;
  const meanGapMs = 3_600_000 / perHour;
  for (let t = startMs - Math.log(1 - rng()) * meanGapMs; t < endMs; t -= Math.log(1 - rng()) * meanGapMs) out.push(Math.round(t));
  return out;
}

/** Karmada fan-out and each site's rebuild loop, driven by the hub Connector writes. */
export function propagateAndRebuild(hubWriteTimes: number[], params: ReplayParams, sink: ReplaySink, rng: Rng): void {
  const uniform = ([low, high]: [number, number]) => Math.round((low + rng() * (high - low)) * 1000);
  const durationAt = (t: number) => uniform(t >= params.onsetMs && t < params.eventEndMs ? params.rebuildSeconds.during : params.rebuildSeconds.before);
  for (const site of params.sites) {
    const triggers: number[] = [];
    for (const h of hubWriteTimes) {
      const arrived = h + 150 + Math.round(rng() * 750);
      sink.propagations.push({ timeMs: arrived, site, kind: "Connector", operationResult: "updated" });
      triggers.push(arrived + 200 + Math.round(rng() * 400));
    }
    for (const t of poissonTimes(params.otherTriggersPerHour, params.startMs, params.endMs, rng)) {
      sink.propagations.push({ timeMs: t, site, kind: "HTTPProxy", operationResult: "updated" });
      triggers.push(t + 200 + Math.round(rng() * 400));
    }
    // Periodic resyncs that find the member copy already current.
    for (const t of poissonTimes(3, params.startMs, params.endMs, rng))
      sink.propagations.push({ timeMs: t, site, kind: "Connector", operationResult: "unchanged" });

    triggers.sort((a, b) => a - b);
    let busyUntil = -Infinity;
    let pendingSinceMs: number | null = null;
    const start = (startMs: number, queuedSinceMs?: number) => {
      const durationMs = durationAt(startMs);
      const hookMs = Math.round(durationMs * (0.55 + rng() * 0.1));
      sink.rebuilds.push({ site, startMs, durationMs, hookMs, ...(queuedSinceMs === undefined ? {} : { queuedSinceMs }) });
      busyUntil = startMs + durationMs;
    };
    for (const t of triggers) {
      if (pendingSinceMs !== null && busyUntil <= t) {
        const since = pendingSinceMs;
        pendingSinceMs = null;
        start(busyUntil, since);
      }
      if (t >= busyUntil) start(t);
      else pendingSinceMs ??= t;
    }
    if (pendingSinceMs !== null) start(busyUntil, pendingSinceMs);
  }
}
