/**
 * Object shapes of the replay, as the real controllers write them: the project-side Connector, its hub
 * copy carrying the replicator's `networking.datumapis.com/upstream-status` annotation, and the
 * agent's Lease. Values (ids, addresses, uids) come from the seeded generator.
 */
import { sortedJson, type Json } from "../churn/json";

export const CONNECTOR_API = "networking.datumapis.com/v1alpha1";
export const UPSTREAM_STATUS = "networking.datumapis.com/upstream-status";
export const REPLICATOR_FINALIZER = "gateway.networking.datumapis.com/gateway-resource-replicator";
export const IROH_FINALIZER = "networking.datumapis.com/iroh-dns-cleanup";

export const MESSAGES = {
  ready: "The connector is ready to tunnel traffic.",
  notRenewed: "Connector lease has not been renewed yet.",
  expired: "Connector lease has expired. Agent may be offline.",
  notCreated: "Connector lease has not been created yet.",
} as const;

export type Obj = { [key: string]: Json };

export interface Condition extends Obj {
  type: string;
  status: string;
  reason: string;
  message: string;
  observedGeneration: number;
  lastTransitionTime: string;
}

export function iso(ms: number): string {
  return new Date(ms).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** metav1.MicroTime as the API server prints it. */
export function microTime(ms: number): string {
  return new Date(ms).toISOString().replace(/Z$/, "000Z");
}

export function condition(type: string, status: string, reason: string, message: string, atMs: number): Condition {
  return { type, status, reason, message, observedGeneration: 1, lastTransitionTime: iso(atMs) };
}

/** apimeta.SetStatusCondition: keep lastTransitionTime unless the status flips. */
export function setCondition(conditions: Condition[], next: Condition): Condition[] {
  const existing = conditions.find((c) => c.type === next.type);
  if (!existing) return [...conditions, next];
  const merged = { ...next, lastTransitionTime: existing.status === next.status ? existing.lastTransitionTime : next.lastTransitionTime };
  return conditions.map((c) => (c.type === next.type ? merged : c));
}

interface ManagedEntry {
  manager: string;
  operation: "Update" | "Apply";
  subresource?: "status";
  fields: Json;
}

/** Records a write in metadata.managedFields: the manager's entry gets the write's time (and is added if new). */
export function touchManagedFields(obj: Obj, entry: ManagedEntry, atMs: number): void {
  const metadata = obj.metadata as Obj;
  const list = ((metadata.managedFields as Obj[] | undefined) ?? []).filter(
    (m) => !(m.manager === entry.manager && m.operation === entry.operation && (m.subresource ?? null) === (entry.subresource ?? null)),
  );
  const fresh: Obj = {
    manager: entry.manager,
    operation: entry.operation,
    apiVersion: obj.apiVersion as string,
    time: iso(atMs),
    fieldsType: "FieldsV1",
    fieldsV1: entry.fields,
  };
  if (entry.subresource) fresh.subresource = entry.subresource;
  list.push(fresh);
  metadata.managedFields = list;
}

export const FIELDS = {
  agentStatus: {
    "f:status": {
      "f:connectionDetails": { ".": {}, "f:publicKey": { ".": {}, "f:addresses": {}, "f:discoveryMode": {}, "f:homeRelay": {}, "f:id": {} }, "f:type": {} },
    },
  },
  controllerStatus: {
    "f:status": {
      "f:conditions": { ".": {}, 'k:{"type":"Accepted"}': {}, 'k:{"type":"IrohDNSPublished"}': {}, 'k:{"type":"Ready"}': {} },
      "f:leaseRef": { ".": {}, "f:name": {} },
    },
  },
  finalizers: { "f:metadata": { "f:finalizers": { ".": {}, [`v:"${REPLICATOR_FINALIZER}"`]: {}, [`v:"${IROH_FINALIZER}"`]: {} } } },
  agentSpec: { "f:spec": { ".": {}, "f:connectorClassName": {} } },
  hubCopy: {
    "f:metadata": {
      "f:annotations": { ".": {}, [`f:${UPSTREAM_STATUS}`]: {} },
      "f:labels": {
        ".": {},
        "f:meta.datumapis.com/upstream-cluster-name": {},
        "f:meta.datumapis.com/upstream-group": {},
        "f:meta.datumapis.com/upstream-kind": {},
        "f:meta.datumapis.com/upstream-name": {},
        "f:meta.datumapis.com/upstream-namespace": {},
      },
      "f:ownerReferences": { ".": {} },
    },
    "f:spec": { ".": {}, "f:connectorClassName": {} },
  },
  leaseRenew: { "f:spec": { "f:renewTime": {} } },
  leaseAcquire: { "f:spec": { "f:acquireTime": {}, "f:renewTime": {} } },
  leaseCreate: { "f:metadata": { "f:ownerReferences": { ".": {} } }, "f:spec": { "f:holderIdentity": {}, "f:leaseDurationSeconds": {} } },
} satisfies Record<string, Json>;

export interface ConnectorIdentity {
  namespace: string;
  name: string;
  uid: string;
  createdMs: number;
}

export function projectConnector(id: ConnectorIdentity, status: Obj): Obj {
  return {
    apiVersion: CONNECTOR_API,
    kind: "Connector",
    metadata: {
      name: id.name,
      namespace: id.namespace,
      uid: id.uid,
      generation: 1,
      creationTimestamp: iso(id.createdMs),
      finalizers: [REPLICATOR_FINALIZER, IROH_FINALIZER],
    },
    spec: { connectorClassName: "datum-connect" },
    status,
  };
}

/** The hub copy the replicator writes with one CreateOrUpdate. */
export function hubConnector(upstream: Obj, hubNamespace: string, anchorUid: string, hubUid: string): Obj {
  const meta = upstream.metadata as Obj;
  return {
    apiVersion: CONNECTOR_API,
    kind: "Connector",
    metadata: {
      name: meta.name,
      namespace: hubNamespace,
      uid: hubUid,
      generation: 1,
      creationTimestamp: meta.creationTimestamp,
      labels: {
        "meta.datumapis.com/upstream-cluster-name": "cluster-milo",
        "meta.datumapis.com/upstream-group": "networking.datumapis.com",
        "meta.datumapis.com/upstream-kind": "Connector",
        "meta.datumapis.com/upstream-name": meta.name as string,
        "meta.datumapis.com/upstream-namespace": meta.namespace as string,
      },
      annotations: { [UPSTREAM_STATUS]: sortedJson(upstream.status as Json) },
      ownerReferences: [
        { apiVersion: "v1", kind: "ConfigMap", name: `anchor-${meta.uid as string}`, uid: anchorUid, controller: true, blockOwnerDeletion: true },
      ],
    },
    spec: upstream.spec as Json,
    // The CRD's default status; the edge reads the annotation instead.
    status: {
      conditions: [{ type: "Accepted", status: "Unknown", reason: "Pending", message: "Waiting for controller", lastTransitionTime: "1970-01-01T00:00:00Z" }],
    },
  };
}

export function lease(id: ConnectorIdentity, leaseUid: string, renewMs: number | null): Obj {
  return {
    apiVersion: "coordination.k8s.io/v1",
    kind: "Lease",
    metadata: {
      name: id.name,
      namespace: id.namespace,
      uid: leaseUid,
      creationTimestamp: iso(id.createdMs),
      ownerReferences: [{ apiVersion: CONNECTOR_API, kind: "Connector", name: id.name, uid: id.uid, controller: true, blockOwnerDeletion: true }],
    },
    spec: { holderIdentity: id.name, leaseDurationSeconds: 30, ...(renewMs === null ? {} : { renewTime: microTime(renewMs) }) },
  };
}
