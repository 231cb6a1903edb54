/** What the replay generator produces, in domain terms. */
import { cloneJson } from "../churn/json";
import type { Obj } from "./objects";

export const PROJECT_JOB = "milo-apiserver";
export const HUB_JOB = "karmada-system/karmada-apiserver";
export const CONTROL_PLANE = "prod-infrastructure-control-plane";

export type ClusterName = "milo" | "hub";

export interface ObjectRef {
  cluster: ClusterName;
  apiVersion: string;
  kind: string;
  resource: string;
  group: string;
  namespace: string;
  name: string;
}

export type WriteClass = "create" | "delete" | "routed" | "unrouted";

/** One successful write that changed an object; `object` is the version it produced (null once deleted). */
export interface ReplayWrite {
  timeMs: number;
  objectIndex: number;
  verb: "POST" | "PUT" | "PATCH" | "DELETE";
  subresource?: "status";
  manager: string;
  /** the generator's own classification, from what it meant to change */
  cls: WriteClass;
  /** why the model wrote, e.g. "lease-flap" */
  cause: string;
  object: Obj | null;
}

/** One API request as apiserver_request_total counts it (failed ones included). */
export interface ApiRequest {
  timeMs: number;
  job: string;
  resource: string;
  group: string;
  version: string;
  verb: string;
  subresource?: string;
  code: number;
  /** the object written and who wrote it, as the audit log records them */
  namespace: string;
  name: string;
  user: string;
  userAgent: string;
}

export interface Reconcile {
  timeMs: number;
  controller: "connector" | "iroh-dns" | "gateway_resource_replicator";
  result: "success" | "error" | "requeue_after";
}

export interface Propagation {
  timeMs: number;
  site: string;
  kind: "Connector" | "HTTPProxy";
  operationResult: "updated" | "unchanged";
}

export interface Rebuild {
  site: string;
  startMs: number;
  durationMs: number;
  /** the extension hook's share of the rebuild */
  hookMs: number;
  /** set when updates waited for the previous rebuild (the runner coalesces them into this one) */
  queuedSinceMs?: number;
}

export class ReplaySink {
  readonly objects: ObjectRef[] = [];
  readonly writes: ReplayWrite[] = [];
  readonly requests: ApiRequest[] = [];
  readonly reconciles: Reconcile[] = [];
  readonly propagations: Propagation[] = [];
  readonly rebuilds: Rebuild[] = [];
  /** each object's first version, or null when the replay creates it */
  readonly initial: (Obj | null)[] = [];

  addObject(ref: ObjectRef, initial: Obj | null): number {
    this.objects.push(ref);
    this.initial.push(initial === null ? null : cloneJson(initial));
    return this.objects.length - 1;
  }
}
