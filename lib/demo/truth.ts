/**
 * Ground truth of a replay, computed from the generator's own events (never from Prometheus): the
 * seed's windowed counts, each object's writes by class, the fields that churn and who writes them.
 */
import { diffObjects } from "../churn/diff";
import type { Json } from "../churn/json";
import type { Replay } from "./replay";
import { HUB_JOB, PROJECT_JOB, type ApiRequest, type WriteClass } from "./types";

const WRITE_VERBS = new Set(["POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"]);

export interface WindowTruth {
  startMs: number;
  endMs: number;
  /** seed query 1: project control-plane Connector writes, any code */
  projectConnectorWrites: number;
  /** seed query 2: hub Connector PUTs */
  hubConnectorWrites: number;
  /** seed query 4: Connector status PUTs in the project control plane */
  statusUpdates: number;
  /** seed query 3: connector reconciles with result="success" (ending not ready) */
  notReadyReconciles: number;
  /** seed query 5: Lease PATCHes */
  leaseRenewals: number;
}

export interface ObjectTruth {
  cluster: string;
  kind: string;
  namespace: string;
  name: string;
  writes: number;
  byClass: Record<WriteClass, number>;
}

export interface FieldTruth {
  cluster: string;
  kind: string;
  path: string;
  changes: number;
  writers: Record<string, number>;
}

export const isProjectConnectorWrite = (q: ApiRequest) => q.job === PROJECT_JOB && q.resource === "connectors" && WRITE_VERBS.has(q.verb);
export const isHubConnectorPut = (q: ApiRequest) => q.job === HUB_JOB && q.resource === "connectors" && q.verb === "PUT";
export const isStatusUpdate = (q: ApiRequest) => q.job === PROJECT_JOB && q.resource === "connectors" && q.subresource === "status" && q.verb === "PUT";
export const isLeaseRenewal = (q: ApiRequest) => q.job === PROJECT_JOB && q.resource === "leases" && q.verb === "PATCH";

/** Counts in (start, end] for consecutive windows of `hours` aligned to the epoch (as increase[Nh] at N h boundaries). */
export function windowTruth({ params, sink }: Replay, hours: number): WindowTruth[] {
  const size = hours * 3_600_000;
  const out: WindowTruth[] = [];
  for (let start = Math.ceil(params.startMs / size) * size; start + size <= params.endMs; start += size) {
    const end = start + size;
    const requests = sink.requests.filter((q) => q.timeMs > start && q.timeMs <= end);
    out.push({
      startMs: start,
      endMs: end,
      projectConnectorWrites: requests.filter(isProjectConnectorWrite).length,
      hubConnectorWrites: requests.filter(isHubConnectorPut).length,
      statusUpdates: requests.filter(isStatusUpdate).length,
      notReadyReconciles: sink.reconciles.filter((r) => r.controller === "connector" && r.result === "success" && r.timeMs > start && r.timeMs <= end).length,
      leaseRenewals: requests.filter(isLeaseRenewal).length,
    });
  }
  return out;
}

export function objectTruth({ sink }: Replay): ObjectTruth[] {
  const out = sink.objects.map((ref): ObjectTruth => ({
    cluster: ref.cluster,
    kind: ref.kind,
    namespace: ref.namespace,
    name: ref.name,
    writes: 0,
    byClass: { create: 0, delete: 0, routed: 0, unrouted: 0 },
  }));
  for (const w of sink.writes) {
    out[w.objectIndex].writes++;
    out[w.objectIndex].byClass[w.cls]++;
  }
  return out;
}

/** Changed paths across objects of each kind and cluster, with the managers that changed them. */
export function fieldTruth({ sink }: Replay): FieldTruth[] {
  const current = sink.initial.map((o) => (o === null ? undefined : (o as Json)));
  const byKey = new Map<string, FieldTruth>();
  for (const w of sink.writes) {
    const ref = sink.objects[w.objectIndex];
    const after = w.object === null ? undefined : (w.object as Json);
    if (w.cls !== "create" && w.cls !== "delete") {
      for (const change of diffObjects(current[w.objectIndex], after)) {
        const key = `${ref.cluster}\u0000${ref.kind}\u0000${change.path}`;
        const entry = byKey.get(key) ?? { cluster: ref.cluster, kind: ref.kind, path: change.path, changes: 0, writers: {} };
        entry.changes++;
        entry.writers[w.manager] = (entry.writers[w.manager] ?? 0) + 1;
        byKey.set(key, entry);
      }
    }
    current[w.objectIndex] = after;
  }
  return [...byKey.values()].sort((a, b) => b.changes - a.changes);
}

/** Every flip of a project-side Connector's Ready status in the window (a condition first set is not a flip). */
export function readyTransitions({ sink }: Replay): { namespace: string; name: string; timeMs: number; status: string }[] {
  const readyOf = (obj: unknown) =>
    ((obj as { status?: { conditions?: { type: string; status: string; lastTransitionTime: string }[] } } | null)?.status?.conditions ?? []).find(
      (c) => c.type === "Ready",
    );
  const previous = sink.initial.map((o) => readyOf(o)?.status);
  const out: { namespace: string; name: string; timeMs: number; status: string }[] = [];
  for (const w of sink.writes) {
    const ref = sink.objects[w.objectIndex];
    if (ref.cluster !== "milo" || ref.kind !== "Connector") continue;
    const ready = readyOf(w.object);
    if (ready && previous[w.objectIndex] !== undefined && ready.status !== previous[w.objectIndex]) {
      out.push({ namespace: ref.namespace, name: ref.name, timeMs: Date.parse(ready.lastTransitionTime), status: ready.status });
    }
    previous[w.objectIndex] = ready?.status;
  }
  return out;
}
