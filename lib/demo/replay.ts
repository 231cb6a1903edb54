/**
 * The Connector churn replay (the Connector churn write-up): builds the cast, runs every Connector's project-side life,
 * replicates to the hub, fans out to the edge, and returns the objects, their writes, the requests
 * and the edge's rebuilds. Deterministic: the same parameters give the same output on every machine.
 */
import { addReleases } from "./releases";
import { createRng, type Rng } from "../scenario/rng";
import { poissonTimes, propagateAndRebuild, replicate } from "./downstream";
import { CONNECTOR_API, FIELDS, MESSAGES, condition, hubConnector, lease, projectConnector, touchManagedFields, type Obj } from "./objects";
import { DEFAULT_REPLAY, type ReplayParams } from "./params";
import { ConnectorSim, type Action } from "./project-side";
import { ReplaySink, type ReplayWrite } from "./types";
import { buildWorld, type ConnectorPlan, type Role } from "./world";

const HOUR = 3_600_000;
const DAY = 24 * HOUR;

export interface Replay {
  params: ReplayParams;
  sink: ReplaySink;
}

/** When each Connector's agent is up and renewing its Lease. */
export function onlineIntervals(role: Role, params: ReplayParams): [number, number][] {
  switch (role.kind) {
    case "online":
      return [[params.startMs, role.untilMs ?? params.endMs]];
    case "sessions":
      return role.sessions;
    case "flapping":
      return role.onlineUntilMs === undefined ? [] : [[params.startMs, role.onlineUntilMs]];
    case "created":
      return [[role.atMs + 2_000, params.endMs]];
    case "late-online":
      return [[role.atMs, params.endMs]];
    default:
      return [];
  }
}

function uniformMs(rng: Rng, low: number, high: number): number {
  return Math.round(low + rng() * (high - low));
}

function initialObjects(plan: ConnectorPlan, params: ReplayParams, rng: Rng): { conn: Obj; lease: Obj } {
  const online = onlineIntervals(plan.role, params).some(([from]) => from <= params.startMs);
  const createdMs = params.startMs - uniformMs(rng, 10 * DAY, 60 * DAY);
  const acceptedMs = createdMs + 1_000;
  const readySinceMs = params.startMs - uniformMs(rng, 1 * DAY, 9 * DAY);
  const identity = { namespace: plan.namespace, name: plan.name, uid: plan.uid, createdMs };
  const conn = projectConnector(identity, {
    conditions: [
      condition("Accepted", "True", "Accepted", "Connector class resolved", acceptedMs),
      online
        ? condition("Ready", "True", "ConnectorReady", MESSAGES.ready, readySinceMs)
        : condition("Ready", "False", "ConnectorNotReady", MESSAGES.expired, readySinceMs),
      condition("IrohDNSPublished", "True", "Owner", "Owns iroh DNS record.", acceptedMs + 7_000),
    ],
    connectionDetails: {
      type: "PublicKey",
      publicKey: { id: plan.publicKeyId, discoveryMode: "DNS", homeRelay: "https://euc1-1.relay.iroh.network./", addresses: plan.addresses },
    },
    leaseRef: { name: plan.name },
  });
  touchManagedFields(conn, { manager: "datum-connect", operation: "Update", fields: FIELDS.agentSpec }, createdMs);
  touchManagedFields(conn, { manager: "network-services-operator", operation: "Update", fields: FIELDS.finalizers }, createdMs + 300);
  touchManagedFields(conn, { manager: "datum-connect", operation: "Update", subresource: "status", fields: FIELDS.agentStatus }, readySinceMs - 2_000);
  touchManagedFields(conn, { manager: "network-services-operator", operation: "Update", subresource: "status", fields: FIELDS.controllerStatus }, readySinceMs);
  const renewMs = online ? params.startMs - uniformMs(rng, 0, 15_000) : readySinceMs - 30_000;
  const leaseObj = lease(identity, plan.leaseUid, renewMs);
  touchManagedFields(leaseObj, { manager: "network-services-operator", operation: "Update", fields: FIELDS.leaseCreate }, createdMs + 500);
  touchManagedFields(leaseObj, { manager: "datum-connect", operation: "Update", fields: FIELDS.leaseRenew }, renewMs);
  return { conn, lease: leaseObj };
}

/** Flapping lease writes: per 6 h window a total from params.flapsPer6h, spread unevenly over its hours. */
function flapSchedule(plans: ConnectorPlan[], params: ReplayParams, rng: Rng): Map<ConnectorPlan, number[]> {
  const out = new Map<ConnectorPlan, number[]>();
  const flapping = plans.filter((p) => p.role.kind === "flapping");
  const windowMs = 6 * HOUR;
  for (let w = Math.floor(params.onsetMs / windowMs) * windowMs; w < params.eventEndMs; w += windowMs) {
    const total = uniformMs(rng, params.flapsPer6h[0], params.flapsPer6h[1]);
    const weights = Array.from({ length: 6 }, () => 0.8 + 0.4 * rng());
    const weightSum = weights.reduce((a, b) => a + b, 0);
    for (let h = 0; h < 6; h++) {
      const from = Math.max(w + h * HOUR, params.onsetMs);
      const to = Math.min(w + (h + 1) * HOUR, params.eventEndMs);
      if (to <= from) continue;
      const count = Math.round(((total * weights[h]) / weightSum) * ((to - from) / HOUR));
      for (let i = 0; i < count; i++) {
        const t = uniformMs(rng, from, to);
        const active = flapping.filter((p) => p.role.kind === "flapping" && p.role.fromMs <= t && t < p.role.untilMs);
        if (active.length === 0) continue;
        const plan = active[Math.floor(rng() * active.length)];
        out.set(plan, [...(out.get(plan) ?? []), t]);
      }
    }
  }
  return out;
}

function actionsFor(plan: ConnectorPlan, params: ReplayParams, rng: Rng, flaps: number[], reorders: number[]): Action[] {
  const actions: Action[] = [];
  if (plan.role.kind === "created") actions.push({ t: plan.role.atMs, type: "create" });
  if (plan.role.kind === "deleted") actions.push({ t: plan.role.atMs, type: "delete" });
  for (const [from, to] of onlineIntervals(plan.role, params)) {
    let t = from;
    if (from > params.startMs && plan.role.kind !== "created") actions.push({ t: from - 1_000, type: "details" });
    else t = from + uniformMs(rng, 0, params.renewalSeconds[1] * 1000);
    for (; t <= to; t += uniformMs(rng, params.renewalSeconds[0] * 1000, params.renewalSeconds[1] * 1000)) actions.push({ t, type: "renew" });
  }
  for (const t of flaps) actions.push({ t, type: "flap" });
  for (const t of reorders) actions.push({ t, type: "reorder" });
  return actions;
}

export function generateReplay(params: ReplayParams = DEFAULT_REPLAY): Replay {
  const rng = createRng(params.seed);
  const world = buildWorld(params, rng);
  const sink = new ReplaySink();
  const flaps = flapSchedule(world.connectors, params, rng);

  // The agents' order-unstable address lists: a flat rate, each on an agent that is up at the time.
  const reorders = new Map<ConnectorPlan, number[]>();
  for (const t of poissonTimes(params.addressPatchesPerSecond * 3600, params.startMs, params.endMs, rng)) {
    const up = world.connectors.filter((p) => onlineIntervals(p.role, params).some(([from, to]) => from + 5_000 < t && t < to));
    if (up.length === 0) continue;
    const plan = up[Math.floor(rng() * up.length)];
    reorders.set(plan, [...(reorders.get(plan) ?? []), t]);
  }

  const hubTargets = [];
  for (const plan of world.connectors) {
    const existing = plan.role.kind === "created" ? null : initialObjects(plan, params, rng);
    const ref = (cluster: "milo" | "hub", kind: string, namespace: string) => ({
      cluster,
      apiVersion: kind === "Lease" ? "coordination.k8s.io/v1" : CONNECTOR_API,
      kind,
      resource: kind === "Lease" ? "leases" : "connectors",
      group: kind === "Lease" ? "coordination.k8s.io" : "networking.datumapis.com",
      namespace,
      name: plan.name,
    });
    const hubNamespace = `ns-${world.namespaceUids.get(plan.namespace)}`;
    const initialHub = existing ? hubConnector(existing.conn, hubNamespace, plan.anchorUid, plan.hubUid) : null;
    if (initialHub)
      touchManagedFields(initialHub, { manager: "network-services-operator", operation: "Update", fields: FIELDS.hubCopy }, params.startMs - 3_600_000);
    const indexes = {
      connector: sink.addObject(ref("milo", "Connector", plan.namespace), existing?.conn ?? null),
      lease: sink.addObject(ref("milo", "Lease", plan.namespace), existing?.lease ?? null),
    };
    const hubIndex = sink.addObject(ref("hub", "Connector", hubNamespace), initialHub);
    const sim = new ConnectorSim(plan, sink, rng, indexes, existing?.conn ?? null, existing?.lease ?? null);
    sim.run(actionsFor(plan, params, rng, flaps.get(plan) ?? [], reorders.get(plan) ?? []), params.endMs);
    hubTargets.push({ plan, hubNamespace, hubIndex, initialHub, initialUpstream: existing?.conn ?? null, connectorIndex: indexes.connector });
  }

  const byObject = new Map<number, ReplayWrite[]>();
  for (const w of sink.writes) {
    const list = byObject.get(w.objectIndex);
    if (list) list.push(w);
    else byObject.set(w.objectIndex, [w]);
  }
  for (const target of hubTargets) {
    const upstream = (byObject.get(target.connectorIndex) ?? []).sort((a, b) => a.timeMs - b.timeMs);
    replicate(target, upstream, sink, rng);
  }
  const hubWriteTimes = sink.writes
    .filter((w) => sink.objects[w.objectIndex].cluster === "hub")
    .map((w) => w.timeMs)
    .sort((a, b) => a - b);
  propagateAndRebuild(hubWriteTimes, params, sink, rng);
  addReleases(sink, params);

  finish(sink, params);
  return { params, sink };
}

/** Time order everywhere, and resourceVersions as each cluster's etcd would assign them. */
function finish(sink: ReplaySink, params: ReplayParams): void {
  const keepInWindow = <T extends { timeMs: number }>(list: T[]) => {
    const kept = list.filter((x) => x.timeMs > params.startMs && x.timeMs <= params.endMs).sort((a, b) => a.timeMs - b.timeMs);
    list.length = 0;
    for (const x of kept) list.push(x);
  };
  keepInWindow(sink.writes);
  keepInWindow(sink.requests);
  keepInWindow(sink.reconciles);
  keepInWindow(sink.propagations);
  const writes = sink.writes;
  const revision = { milo: 184_000_000, hub: 52_000_000 };
  sink.initial.forEach((obj, i) => {
    if (obj) (obj.metadata as Obj).resourceVersion = String(revision[sink.objects[i].cluster]++);
  });
  for (const w of writes) {
    const rv = String(revision[sink.objects[w.objectIndex].cluster]++);
    if (w.object) (w.object.metadata as Obj).resourceVersion = rv;
  }
}
