/**
 * One Connector's life in its project control plane: what its agent writes (Lease renewals,
 * connectionDetails), what the connector and iroh-dns controllers write back in response, and the
 * requests and reconciles that produces. The controllers behave as the real ones do: Ready is computed
 * from the Lease, SetStatusCondition keeps lastTransitionTime unless the status flips, and status
 * is written only when it changed.
 */
import { cloneJson, jsonEqual, type Json } from "../churn/json";
import type { Rng } from "../scenario/rng";
import {
  CONNECTOR_API,
  FIELDS,
  IROH_FINALIZER,
  MESSAGES,
  REPLICATOR_FINALIZER,
  condition,
  iso,
  lease,
  microTime,
  projectConnector,
  setCondition,
  touchManagedFields,
  type Condition,
  type Obj,
} from "./objects";
import { clientOf } from "./clients";
import { PROJECT_JOB, type ApiRequest, type ReplaySink, type WriteClass } from "./types";
import type { ConnectorPlan } from "./world";

export const LEASE_SECONDS = 30;
const NSO = "network-services-operator";
const AGENT = "datum-connect";
/** Share of controller status PUTs that first fail with 409 Conflict and are retried. */
const STATUS_CONFLICT_SHARE = 0.03;
/** Share of flapping lease writes that repeat the previous one (so the reconcile finds nothing to write). */
const FLAP_REPEAT_SHARE = 0.05;
/** Share of flapping lease events on which the iroh-dns controller rewrites IrohDNSPublished. */
const IROH_TOGGLE_SHARE = 0.04;

export type Action =
  | { t: number; type: "renew" }
  | { t: number; type: "details" }
  | { t: number; type: "reorder" }
  | { t: number; type: "flap" }
  | { t: number; type: "create" }
  | { t: number; type: "delete" };

/** What the edge reads from a Connector: the generator's model of "routed". */
export function edgeView(status: Json | undefined): string {
  const st = (status ?? {}) as Obj;
  const ready = ((st.conditions as Condition[] | undefined) ?? []).find((c) => c.type === "Ready");
  const online = ready?.status === "True";
  const details = st.connectionDetails as Obj | undefined;
  const key = details?.publicKey as Obj | undefined;
  return `${online}/${online && details?.type === "PublicKey" && key ? (key.id as string) : ""}`;
}

export interface ConnectorIndexes {
  connector: number;
  lease: number;
}

export class ConnectorSim {
  conn: Obj | null;
  leaseObj: Obj | null;
  private expiryCheckMs: number | null = null;
  private lastFlap: "reacquire" | "stale" = "stale";
  private readonly identity;

  constructor(
    private readonly plan: ConnectorPlan,
    private readonly sink: ReplaySink,
    private readonly rng: Rng,
    private readonly idx: ConnectorIndexes,
    initialConn: Obj | null,
    initialLease: Obj | null,
  ) {
    this.conn = initialConn;
    this.leaseObj = initialLease;
    this.identity = { namespace: plan.namespace, name: plan.name, uid: plan.uid, createdMs: 0 };
    if (initialConn && initialLease && edgeView(initialConn.status as Json).startsWith("true")) {
      this.expiryCheckMs = this.expiryOf(initialLease);
    }
  }

  run(actions: Action[], endMs: number): void {
    for (const action of actions.sort((a, b) => a.t - b.t)) {
      this.expireBefore(action.t);
      if (action.t > endMs) break;
      this[action.type](action.t);
    }
    this.expireBefore(endMs);
  }

  // --- agent actions ---

  private renew(t: number): void {
    if (!this.leaseObj || !this.conn) return;
    this.writeLease(t, "heartbeat", (spec) => (spec.renewTime = microTime(t)), FIELDS.leaseRenew);
    this.reconcile(t + 20);
    // Both controllers watch the Lease without a predicate: each renewal re-runs both.
    this.sink.reconciles.push({ timeMs: t + 400, controller: "iroh-dns", result: "success" });
  }

  private flap(t: number): void {
    if (!this.leaseObj || !this.conn) return;
    const shape = this.rng() < FLAP_REPEAT_SHARE ? this.lastFlap : this.lastFlap === "stale" ? "reacquire" : "stale";
    this.lastFlap = shape;
    if (shape === "reacquire") {
      // The agent's reconnect loop re-acquires the lease without renewing it: "not renewed yet".
      this.writeLease(
        t,
        "lease-flap",
        (spec) => {
          spec.acquireTime = microTime(t);
          delete spec.renewTime;
        },
        FIELDS.leaseAcquire,
      );
    } else {
      // …then renews it with a clock that runs behind: the lease is already expired.
      const skewMs = 40_000 + Math.round(this.rng() * 200_000);
      this.writeLease(t, "lease-flap", (spec) => (spec.renewTime = microTime(t - skewMs)), FIELDS.leaseRenew);
    }
    this.reconcile(t + 20 + Math.round(this.rng() * 200));
    if (this.rng() < IROH_TOGGLE_SHARE) {
      const published = this.conditionOf("IrohDNSPublished")?.status === "True";
      const next = published
        ? condition("IrohDNSPublished", "False", "Pending", "Connector status does not yet carry connection details.", t)
        : condition("IrohDNSPublished", "True", "Owner", "Owns iroh DNS record.", t);
      this.writeStatus(t + 400, "iroh-dns", (status) => (status.conditions = setCondition(status.conditions as Condition[], next)));
    } else {
      this.sink.reconciles.push({ timeMs: t + 400, controller: "iroh-dns", result: "success" });
    }
  }

  private details(t: number): void {
    if (!this.conn) return;
    // A new session: the agent publishes where it can be reached now.
    const addresses = this.plan.addresses.map((a) => ({ address: a.address, port: a.port + 1 + Math.floor(this.rng() * 100) }));
    this.plan.addresses = addresses;
    this.writeAgentStatus(t, "agent-connected", addresses);
  }

  private reorder(t: number): void {
    const current = ((this.conn?.status as Obj | undefined)?.connectionDetails as Obj | undefined)?.publicKey as Obj | undefined;
    if (!current) return;
    // Same set, other order: the agent compares order-sensitively and re-patches.
    const addresses = [...(current.addresses as Obj[])].reverse();
    this.writeAgentStatus(t, "address-order", addresses);
  }

  private create(t: number): void {
    this.identity.createdMs = t;
    const conn = projectConnector(this.identity, {
      conditions: [{ type: "Accepted", status: "Unknown", reason: "Pending", message: "Waiting for controller", lastTransitionTime: "1970-01-01T00:00:00Z" }],
    });
    (conn.metadata as Obj).finalizers = [];
    touchManagedFields(conn, { manager: AGENT, operation: "Update", fields: FIELDS.agentSpec }, t);
    this.conn = conn;
    this.record(t, this.idx.connector, "POST", undefined, AGENT, "create", "agent-created", conn, "connectors", CONNECTOR_API);
    this.addFinalizer(t + 150, REPLICATOR_FINALIZER);
    this.addFinalizer(t + 300, IROH_FINALIZER);
    // The connector controller creates the Lease, then reports that nothing renewed it yet.
    const created = lease(this.identity, this.plan.leaseUid, null);
    touchManagedFields(created, { manager: NSO, operation: "Update", fields: FIELDS.leaseCreate }, t + 450);
    this.leaseObj = created;
    this.record(t + 450, this.idx.lease, "POST", undefined, NSO, "create", "lease-created", created, "leases", "coordination.k8s.io/v1");
    this.writeStatus(t + 500, "connector", (status) => {
      status.conditions = setCondition(status.conditions as Condition[], condition("Accepted", "True", "Accepted", "Connector class resolved", t + 500));
      status.conditions = setCondition(status.conditions as Condition[], condition("Ready", "False", "ConnectorNotReady", MESSAGES.notRenewed, t + 500));
      status.leaseRef = { name: this.plan.name };
    });
    this.writeStatus(t + 600, "iroh-dns", (status) => {
      status.conditions = setCondition(
        status.conditions as Condition[],
        condition("IrohDNSPublished", "False", "Pending", "Connector status does not yet carry connection details.", t + 600),
      );
    });
    this.writeAgentStatus(t + 1500, "agent-connected", this.plan.addresses);
    this.writeStatus(t + 1700, "iroh-dns", (status) => {
      status.conditions = setCondition(status.conditions as Condition[], condition("IrohDNSPublished", "True", "Owner", "Owns iroh DNS record.", t + 1700));
    });
  }

  private delete(t: number): void {
    if (!this.conn) return;
    const marked = cloneJson(this.conn);
    (marked.metadata as Obj).deletionTimestamp = iso(t);
    this.conn = marked;
    this.record(t, this.idx.connector, "DELETE", undefined, "datum-cloud-portal", "unrouted", "deletion-requested", marked, "connectors", CONNECTOR_API);
    this.removeFinalizer(t + 300, IROH_FINALIZER);
    // The replicator removes the hub copy, then its own finalizer: the object is gone.
    this.removeFinalizer(t + 800, REPLICATOR_FINALIZER);
    if (this.leaseObj) {
      this.leaseObj = null;
      this.record(
        t + 1500,
        this.idx.lease,
        "DELETE",
        undefined,
        "generic-garbage-collector",
        "delete",
        "owner-deleted",
        null,
        "leases",
        "coordination.k8s.io/v1",
      );
    }
    this.expiryCheckMs = null;
  }

  // --- controllers ---

  /** The connector controller: Ready from the Lease; requeue at expiry while ready. */
  private reconcile(t: number): void {
    if (!this.conn || !this.leaseObj) return;
    const spec = this.leaseObj.spec as Obj;
    const renewMs = typeof spec.renewTime === "string" ? Date.parse(spec.renewTime) : null;
    const ready = renewMs !== null && renewMs + LEASE_SECONDS * 1000 > t;
    const message = renewMs === null ? MESSAGES.notRenewed : ready ? MESSAGES.ready : MESSAGES.expired;
    const next = ready ? condition("Ready", "True", "ConnectorReady", message, t) : condition("Ready", "False", "ConnectorNotReady", message, t);
    this.writeStatus(
      t + 15,
      "connector",
      (status) => (status.conditions = setCondition(status.conditions as Condition[], next)),
      ready ? "requeue_after" : "success",
    );
    this.expiryCheckMs = ready ? this.expiryOf(this.leaseObj) : null;
  }

  private expiryOf(leaseObj: Obj): number {
    const renewMs = Date.parse((leaseObj.spec as Obj).renewTime as string);
    return renewMs + LEASE_SECONDS * 1000 + Math.round(this.rng() * LEASE_SECONDS * 100);
  }

  private expireBefore(t: number): void {
    if (this.expiryCheckMs !== null && this.expiryCheckMs < t) {
      const at = this.expiryCheckMs;
      this.expiryCheckMs = null;
      this.reconcile(at);
    }
  }

  // --- writes ---

  private conditionOf(type: string): Condition | undefined {
    return (((this.conn?.status as Obj | undefined)?.conditions as Condition[] | undefined) ?? []).find((c) => c.type === type);
  }

  /** A controller's reconcile and its status PUT, made only when the status changed. */
  private writeStatus(t: number, controller: "connector" | "iroh-dns", mutate: (status: Obj) => void, result: "success" | "requeue_after" = "success"): void {
    if (!this.conn) return;
    const next = cloneJson(this.conn);
    mutate(next.status as Obj);
    if (jsonEqual(next.status as Json, this.conn.status as Json)) {
      this.sink.reconciles.push({ timeMs: t, controller, result });
      return;
    }
    if (this.rng() < STATUS_CONFLICT_SHARE) {
      this.sink.requests.push(this.request(t - 400, "PUT", "status", 409, NSO, "connectors", CONNECTOR_API));
      this.sink.reconciles.push({ timeMs: t - 400, controller, result: "error" });
    }
    this.sink.reconciles.push({ timeMs: t, controller, result });
    touchManagedFields(next, { manager: NSO, operation: "Update", subresource: "status", fields: FIELDS.controllerStatus }, t);
    const cls: WriteClass = edgeView(this.conn.status as Json) === edgeView(next.status as Json) ? "unrouted" : "routed";
    this.conn = next;
    this.record(
      t,
      this.idx.connector,
      "PUT",
      "status",
      NSO,
      cls,
      controller === "connector" ? "ready-condition" : "iroh-dns-condition",
      next,
      "connectors",
      CONNECTOR_API,
    );
  }

  private writeAgentStatus(t: number, cause: string, addresses: Obj[] | { address: string; port: number }[]): void {
    if (!this.conn) return;
    const next = cloneJson(this.conn);
    (next.status as Obj).connectionDetails = {
      type: "PublicKey",
      publicKey: { id: this.plan.publicKeyId, discoveryMode: "DNS", homeRelay: "https://euc1-1.relay.iroh.network./", addresses: addresses as Json },
    };
    if (jsonEqual(next.status as Json, this.conn.status as Json)) return;
    touchManagedFields(next, { manager: AGENT, operation: "Update", subresource: "status", fields: FIELDS.agentStatus }, t);
    const cls: WriteClass = edgeView(this.conn.status as Json) === edgeView(next.status as Json) ? "unrouted" : "routed";
    this.conn = next;
    this.record(t, this.idx.connector, "PATCH", "status", AGENT, cls, cause, next, "connectors", CONNECTOR_API);
  }

  private writeLease(t: number, cause: string, mutate: (spec: Obj) => void, fields: Json): void {
    const next = cloneJson(this.leaseObj as Obj);
    mutate(next.spec as Obj);
    touchManagedFields(next, { manager: AGENT, operation: "Update", fields }, t);
    this.leaseObj = next;
    this.record(t, this.idx.lease, "PATCH", undefined, AGENT, "unrouted", cause, next, "leases", "coordination.k8s.io/v1");
  }

  private addFinalizer(t: number, finalizer: string): void {
    const next = cloneJson(this.conn as Obj);
    const meta = next.metadata as Obj;
    meta.finalizers = [...((meta.finalizers as string[]) ?? []), finalizer];
    touchManagedFields(next, { manager: NSO, operation: "Update", fields: FIELDS.finalizers }, t);
    this.conn = next;
    this.record(t, this.idx.connector, "PUT", undefined, NSO, "unrouted", "finalizer-added", next, "connectors", CONNECTOR_API);
  }

  private removeFinalizer(t: number, finalizer: string): void {
    const next = cloneJson(this.conn as Obj);
    const meta = next.metadata as Obj;
    meta.finalizers = ((meta.finalizers as string[]) ?? []).filter((f) => f !== finalizer);
    const gone = (meta.finalizers as string[]).length === 0;
    this.conn = gone ? null : next;
    this.record(
      t,
      this.idx.connector,
      "PUT",
      undefined,
      NSO,
      gone ? "delete" : "unrouted",
      gone ? "finalizers-removed" : "finalizer-removed",
      gone ? null : next,
      "connectors",
      CONNECTOR_API,
    );
  }

  private record(
    t: number,
    objectIndex: number,
    verb: "POST" | "PUT" | "PATCH" | "DELETE",
    subresource: "status" | undefined,
    manager: string,
    cls: WriteClass,
    cause: string,
    object: Obj | null,
    resource: "connectors" | "leases",
    apiVersion: string,
  ): void {
    this.sink.writes.push({ timeMs: t, objectIndex, verb, subresource, manager, cls, cause, object: object && cloneJson(object) });
    this.sink.requests.push(this.request(t, verb, subresource, verb === "POST" ? 201 : 200, manager, resource, apiVersion));
  }

  private request(t: number, verb: string, subresource: string | undefined, code: number, manager: string, resource: string, apiVersion: string): ApiRequest {
    const [group, version] = apiVersion.split("/");
    const { namespace, name } = this.plan;
    return {
      timeMs: t,
      job: PROJECT_JOB,
      resource,
      group,
      version,
      verb,
      subresource,
      code,
      namespace,
      name,
      ...clientOf(manager, "milo", namespace, name, t),
    };
  }
}
