/**
 * Controllers that reproduce the three write-ups on a real control plane, through
 * @kubernetes/client-node, each with its own user, user agent and field manager:
 *   - Connector churn: an agent, a status controller whose Ready message flips between two texts
 *     while Ready stays False (with occasional real flips), and a replicator copying the whole status
 *     into the upstream-status annotation of a hub copy in a second namespace;
 *   - periodic identical HTTPRoute status patches (the server answers them with the same
 *     resourceVersion), then one real change;
 *   - a controller updating HTTPRoutes with nothing changed, then its fixed version that skips them.
 * Each controller keeps a ledger of what it meant each write to do: the tests' expected classes.
 */
import { CoreV1Api, CustomObjectsApi, PatchStrategy, setHeaderOptions, type KubeConfig } from "@kubernetes/client-node";
import type { ControlPlane, ControlPlaneUser } from "./control-plane";

export type Intent = "create" | "routed" | "unrouted" | "no-op" | "delete";

export interface LedgerEntry {
  userAgent: string;
  fieldManager: string;
  kind: "Connector" | "HTTPRoute";
  namespace: string;
  name: string;
  verb: "create" | "update" | "patch" | "delete";
  subresource: "" | "status";
  intent: Intent;
  /** the resourceVersion the server answered */
  resourceVersion: string;
}

export interface Actor {
  user: ControlPlaneUser;
  userAgent: string;
  fieldManager: string;
}

export const ACTORS = {
  agent: { user: { name: "datum-connect", token: "agent-token-1" }, userAgent: "datum-connect/0.1.4 (agent)", fieldManager: "datum-connect" },
  statusController: {
    user: { name: "nso-connector", token: "nso-token-1" },
    userAgent: "network-services-operator/v0.26.4 connector-controller",
    fieldManager: "connector-controller",
  },
  replicator: {
    user: { name: "nso-replicator", token: "replicator-token-1" },
    userAgent: "network-services-operator/v0.26.4 gateway-resource-replicator",
    fieldManager: "gateway-resource-replicator",
  },
  routeStatus: {
    user: { name: "linkerd-policy", token: "linkerd-token-1" },
    userAgent: "policy-controller/stable-2.14.9",
    fieldManager: "linkerd.io/policy-controller",
  },
  labelerBefore: { user: { name: "route-labeler", token: "labeler-token-1" }, userAgent: "route-labeler/1.0.0", fieldManager: "route-labeler" },
  labelerAfter: { user: { name: "route-labeler", token: "labeler-token-1" }, userAgent: "route-labeler/1.1.0", fieldManager: "route-labeler" },
  importer: { user: { name: "route-importer", token: "importer-token-1" }, userAgent: "route-importer/0.3.0", fieldManager: "route-importer" },
} satisfies Record<string, Actor>;

/** Every user the controllers write as (one per token; the labeler's two versions share one). */
export const CONTROLLER_USERS: ControlPlaneUser[] = [...new Map(Object.values(ACTORS).map((a) => [a.user.name, a.user])).values()];

const CONNECTORS = { group: "networking.datumapis.com", version: "v1alpha1", plural: "connectors" };
const ROUTES = { group: "gateway.networking.k8s.io", version: "v1", plural: "httproutes" };
export const PROJECT_NAMESPACE = "project-a";
export const ROUTE_NAMESPACE = "edge-routes";
const NOT_RENEWED = "Connector lease has not been renewed yet.";
const EXPIRED = "Connector lease has expired. Agent may be offline.";

type Obj = {
  metadata: { name: string; namespace: string; uid: string; resourceVersion: string; labels?: Record<string, string>; annotations?: Record<string, string> };
  spec?: unknown;
  status?: Record<string, unknown>;
} & Record<string, unknown>;

/** JSON with object keys sorted at every level, compact: how Go's encoding/json writes an unstructured status. */
function goJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(goJson).join(",")}]`;
  if (value !== null && typeof value === "object") {
    return `{${Object.keys(value)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${goJson((value as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(value);
}

class Controller {
  private readonly api: CustomObjectsApi;
  private readonly options: ReturnType<typeof setHeaderOptions>;
  private readonly mergePatch: ReturnType<typeof setHeaderOptions>;

  constructor(
    cp: ControlPlane,
    readonly actor: Actor,
    private readonly ledger: LedgerEntry[],
  ) {
    this.api = cp.kubeConfig(actor.user).makeApiClient(CustomObjectsApi);
    this.options = setHeaderOptions("User-Agent", actor.userAgent);
    this.mergePatch = setHeaderOptions("Content-Type", PatchStrategy.MergePatch, this.options);
  }

  private note(kind: LedgerEntry["kind"], obj: Obj, verb: LedgerEntry["verb"], subresource: LedgerEntry["subresource"], intent: Intent): Obj {
    this.ledger.push({
      userAgent: this.actor.userAgent,
      fieldManager: this.actor.fieldManager,
      kind,
      namespace: obj.metadata.namespace,
      name: obj.metadata.name,
      verb,
      subresource,
      intent,
      resourceVersion: obj.metadata.resourceVersion,
    });
    return obj;
  }

  async get(kind: LedgerEntry["kind"], namespace: string, name: string): Promise<Obj> {
    const gvr = kind === "Connector" ? CONNECTORS : ROUTES;
    return (await this.api.getNamespacedCustomObject({ ...gvr, namespace, name }, this.options)) as Obj;
  }

  async create(kind: LedgerEntry["kind"], namespace: string, body: Record<string, unknown>): Promise<Obj> {
    const gvr = kind === "Connector" ? CONNECTORS : ROUTES;
    const created = (await this.api.createNamespacedCustomObject({ ...gvr, namespace, body, fieldManager: this.actor.fieldManager }, this.options)) as Obj;
    return this.note(kind, created, "create", "", "create");
  }

  async update(kind: LedgerEntry["kind"], obj: Obj, intent: Intent): Promise<Obj> {
    const gvr = kind === "Connector" ? CONNECTORS : ROUTES;
    const { namespace, name } = obj.metadata;
    const updated = (await this.api.replaceNamespacedCustomObject(
      { ...gvr, namespace, name, body: obj, fieldManager: this.actor.fieldManager },
      this.options,
    )) as Obj;
    return this.note(kind, updated, "update", "", intent);
  }

  async updateStatus(kind: LedgerEntry["kind"], obj: Obj, intent: Intent): Promise<Obj> {
    const gvr = kind === "Connector" ? CONNECTORS : ROUTES;
    const { namespace, name } = obj.metadata;
    const updated = (await this.api.replaceNamespacedCustomObjectStatus(
      { ...gvr, namespace, name, body: obj, fieldManager: this.actor.fieldManager },
      this.options,
    )) as Obj;
    return this.note(kind, updated, "update", "status", intent);
  }

  async patchStatus(kind: LedgerEntry["kind"], namespace: string, name: string, status: unknown, intent: Intent): Promise<Obj> {
    const gvr = kind === "Connector" ? CONNECTORS : ROUTES;
    const patched = (await this.api.patchNamespacedCustomObjectStatus(
      { ...gvr, namespace, name, body: { status }, fieldManager: this.actor.fieldManager },
      this.mergePatch,
    )) as Obj;
    return this.note(kind, patched, "patch", "status", intent);
  }

  async delete(kind: LedgerEntry["kind"], obj: Obj): Promise<void> {
    const gvr = kind === "Connector" ? CONNECTORS : ROUTES;
    const { namespace, name } = obj.metadata;
    const gone = (await this.api.deleteNamespacedCustomObject({ ...gvr, namespace, name }, this.options)) as Obj;
    this.note(kind, { ...obj, metadata: { ...obj.metadata, resourceVersion: gone?.metadata?.resourceVersion ?? "" } }, "delete", "", "delete");
  }
}

export async function createNamespaces(kc: KubeConfig, names: string[]): Promise<Record<string, string>> {
  const core = kc.makeApiClient(CoreV1Api);
  const uids: Record<string, string> = {};
  for (const name of names) uids[name] = (await core.createNamespace({ body: { metadata: { name } } })).metadata!.uid!;
  return uids;
}

const condition = (type: string, status: string, reason: string, message: string, at: string, generation = 1) => ({
  type,
  status,
  reason,
  message,
  observedGeneration: generation,
  lastTransitionTime: at,
});

/**
 * Connector churn: `connectors` Connectors, `ticks` status-controller rounds. Every round flips each
 * Connector's Ready message; every `flipEvery`-th round Ready really turns True and, the round after,
 * False again. The replicator copies each new status into the hub copy's annotation, writing only when
 * the annotation text changes. Connectors are named `prefix`-….
 */
export async function connectorChurn(
  cp: ControlPlane,
  ledger: LedgerEntry[],
  {
    prefix = "datum-connect",
    connectors = 3,
    ticks = 8,
    flipEvery = 4,
    hubNamespace,
  }: { prefix?: string; connectors?: number; ticks?: number; flipEvery?: number; hubNamespace: string },
): Promise<void> {
  const agent = new Controller(cp, ACTORS.agent, ledger);
  const controller = new Controller(cp, ACTORS.statusController, ledger);
  const replicator = new Controller(cp, ACTORS.replicator, ledger);
  const names = Array.from({ length: connectors }, (_, i) => `${prefix}-${String.fromCharCode(97 + i)}x${i}`);
  const hubCopies = new Map<string, Obj>();
  const replicate = async (upstream: Obj) => {
    // An upstream object without .status gets no annotation (and keeps the one it has).
    const existing = hubCopies.get(upstream.metadata.name);
    const annotation = upstream.status === undefined ? existing?.metadata.annotations?.["networking.datumapis.com/upstream-status"] : goJson(upstream.status);
    const labels = {
      "meta.datumapis.com/upstream-cluster-name": "cluster-project-a",
      "meta.datumapis.com/upstream-group": "networking.datumapis.com",
      "meta.datumapis.com/upstream-kind": "Connector",
      "meta.datumapis.com/upstream-name": upstream.metadata.name,
      "meta.datumapis.com/upstream-namespace": upstream.metadata.namespace,
    };
    if (!existing) {
      const body = {
        apiVersion: "networking.datumapis.com/v1alpha1",
        kind: "Connector",
        metadata: {
          name: upstream.metadata.name,
          labels,
          ...(annotation === undefined ? {} : { annotations: { "networking.datumapis.com/upstream-status": annotation } }),
        },
        spec: upstream.spec,
      };
      hubCopies.set(upstream.metadata.name, await replicator.create("Connector", hubNamespace, body));
      return;
    }
    if (annotation === undefined || existing.metadata.annotations?.["networking.datumapis.com/upstream-status"] === annotation) return; // CreateOrUpdate: semantically equal, no write
    const ready = (s: unknown) => (s as { conditions?: { type: string; status: string }[] } | undefined)?.conditions?.find((c) => c.type === "Ready")?.status;
    const before = JSON.parse(existing.metadata.annotations?.["networking.datumapis.com/upstream-status"] ?? "{}");
    const intent: Intent = (ready(before) === "True") !== (ready(upstream.status) === "True") ? "routed" : "unrouted";
    hubCopies.set(
      upstream.metadata.name,
      await replicator.update(
        "Connector",
        {
          ...existing,
          metadata: { ...existing.metadata, annotations: { ...existing.metadata.annotations, "networking.datumapis.com/upstream-status": annotation } },
        },
        intent,
      ),
    );
  };

  const started = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace(".000Z", "Z");
  for (const [i, name] of names.entries()) {
    const created = await agent.create("Connector", PROJECT_NAMESPACE, {
      apiVersion: "networking.datumapis.com/v1alpha1",
      kind: "Connector",
      metadata: { name },
      spec: { connectorClassName: "datum-connect" },
    });
    await replicate(created);
    const details = {
      type: "PublicKey",
      publicKey: {
        id: `${(i + 10).toString(16)}`.repeat(32).slice(0, 64),
        discoveryMode: "DNS",
        homeRelay: "https://relay.example.invalid./",
        addresses: [{ address: `192.0.2.${i + 10}`, port: 51820 }],
      },
    };
    // The agent patches only its connection details; not Ready yet, so nothing routed changes.
    await replicate(await agent.patchStatus("Connector", PROJECT_NAMESPACE, name, { connectionDetails: details }, "unrouted"));
  }
  for (let tick = 0; tick < ticks; tick++) {
    for (const name of names) {
      const current = await controller.get("Connector", PROJECT_NAMESPACE, name);
      const conditions = (current.status?.conditions as ReturnType<typeof condition>[] | undefined) ?? [];
      const oldReady = conditions.find((c) => c.type === "Ready");
      const readyNow = tick % flipEvery === flipEvery - 1;
      const ready = readyNow
        ? condition("Ready", "True", "ConnectorReady", "The connector is ready to tunnel traffic.", started)
        : condition("Ready", "False", "ConnectorNotReady", tick % 2 === 0 ? NOT_RENEWED : EXPIRED, started);
      // Like apimeta.SetStatusCondition: the transition time moves only when the status flips.
      if (oldReady && oldReady.status === ready.status) ready.lastTransitionTime = oldReady.lastTransitionTime;
      else ready.lastTransitionTime = new Date(Date.parse(started) + (tick + 1) * 1000).toISOString().replace(".000Z", "Z");
      const status = { ...current.status, conditions: [condition("Accepted", "True", "Accepted", "Connector class resolved", started), ready] };
      const intent: Intent = (oldReady?.status === "True") !== (ready.status === "True") ? "routed" : "unrouted";
      await replicate(await controller.updateStatus("Connector", { ...current, status }, intent));
    }
  }
}

const ROUTE_COUNT = 3;
export const routeNames = Array.from({ length: ROUTE_COUNT }, (_, i) => `web-${i}`);

function routeBody(name: string) {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: { name, labels: { app: name } },
    spec: { parentRefs: [{ name: "edge", namespace: "gateways" }], hostnames: [`${name}.example.com`], rules: [{ backendRefs: [{ name, port: 8080 }] }] },
  };
}

function routeStatus(accepted: "True" | "False", at: string) {
  return {
    parents: [
      {
        parentRef: { group: "gateway.networking.k8s.io", kind: "Gateway", name: "edge", namespace: "gateways" },
        controllerName: "linkerd.io/gateway-controller",
        conditions: [
          {
            type: "Accepted",
            status: accepted,
            reason: accepted === "True" ? "Accepted" : "NoMatchingParent",
            message: "",
            observedGeneration: 1,
            lastTransitionTime: at,
          },
        ],
      },
    ],
  };
}

/**
 * Linkerd before its fix: every round patches every HTTPRoute's status with identical content (the
 * first round sets it); after `rounds` rounds one route's Accepted condition really changes.
 */
export async function periodicStatusPatches(cp: ControlPlane, ledger: LedgerEntry[], { rounds = 4, pauseMs = 300 } = {}): Promise<void> {
  const owner = new Controller(cp, ACTORS.labelerBefore, ledger);
  const linkerd = new Controller(cp, ACTORS.routeStatus, ledger);
  for (const name of routeNames) await owner.create("HTTPRoute", ROUTE_NAMESPACE, routeBody(name));
  const at = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace(".000Z", "Z");
  for (let round = 0; round < rounds; round++) {
    for (const name of routeNames) await linkerd.patchStatus("HTTPRoute", ROUTE_NAMESPACE, name, routeStatus("True", at), round === 0 ? "unrouted" : "no-op");
    await new Promise((r) => setTimeout(r, pauseMs));
  }
  await linkerd.patchStatus(
    "HTTPRoute",
    ROUTE_NAMESPACE,
    routeNames[0],
    routeStatus("False", new Date(Date.parse(at) + 60_000).toISOString().replace(".000Z", "Z")),
    "unrouted",
  );
}

/** The HTTPRoute whose every RequestResponse audit line is longer than its annotation. */
export const BIG_ROUTE = "imported-routes";

/**
 * An importer creates one HTTPRoute carrying `annotationBytes` of imported configuration in an
 * annotation (the API server allows 256 KiB of them), then Linkerd patches its status twice with
 * the same content. At RequestResponse level each write's audit line holds the whole object.
 */
export async function bigRouteWrites(cp: ControlPlane, ledger: LedgerEntry[], { annotationBytes = 220_000 } = {}): Promise<void> {
  const importer = new Controller(cp, ACTORS.importer, ledger);
  const linkerd = new Controller(cp, ACTORS.routeStatus, ledger);
  const entries = Array.from({ length: Math.ceil(annotationBytes / 40) }, (_, i) => `route-${i}.imported.example.com=backend-${i % 97};`);
  const body = routeBody(BIG_ROUTE);
  await importer.create("HTTPRoute", ROUTE_NAMESPACE, {
    ...body,
    metadata: { ...body.metadata, annotations: { "routes.example.com/imported": entries.join("").slice(0, annotationBytes) } },
  });
  const at = new Date(Math.floor(Date.now() / 1000) * 1000).toISOString().replace(".000Z", "Z");
  await linkerd.patchStatus("HTTPRoute", ROUTE_NAMESPACE, BIG_ROUTE, routeStatus("True", at), "unrouted");
  await linkerd.patchStatus("HTTPRoute", ROUTE_NAMESPACE, BIG_ROUTE, routeStatus("True", at), "no-op");
}

/**
 * A controller that updates every HTTPRoute each round with nothing changed (the server answers the
 * same resourceVersion), then its fixed version (another user agent) that compares first and writes
 * once, for the one route whose labels really need a change. Resolves to when the fix rolled out.
 */
export async function unchangedWritesThenFix(cp: ControlPlane, ledger: LedgerEntry[], { rounds = 3, pauseMs = 0 } = {}): Promise<number> {
  const pause = () => new Promise((r) => setTimeout(r, pauseMs));
  const before = new Controller(cp, ACTORS.labelerBefore, ledger);
  for (let round = 0; round < rounds; round++) {
    for (const name of routeNames) await before.update("HTTPRoute", await before.get("HTTPRoute", ROUTE_NAMESPACE, name), "no-op");
    await pause();
  }
  // The fix rolls out: from here on the controller's new version runs.
  const fixedAtMs = Date.now();
  await pause();
  const after = new Controller(cp, ACTORS.labelerAfter, ledger);
  for (let round = 0; round < rounds; round++) {
    for (const name of routeNames) {
      const current = await after.get("HTTPRoute", ROUTE_NAMESPACE, name);
      const want = name === routeNames[1] ? { ...current.metadata.labels, tier: "gold" } : current.metadata.labels;
      if (JSON.stringify(want) === JSON.stringify(current.metadata.labels)) continue;
      await after.update("HTTPRoute", { ...current, metadata: { ...current.metadata, labels: want } }, "unrouted");
    }
    await pause();
  }
  return fixedAtMs;
}

/** Deletes one Connector of each side, so deletes are recorded too. */
export async function deleteOne(cp: ControlPlane, ledger: LedgerEntry[], hubNamespace: string): Promise<void> {
  const replicator = new Controller(cp, ACTORS.replicator, ledger);
  const agent = new Controller(cp, ACTORS.agent, ledger);
  const [first] = (
    await cp
      .kubeConfig()
      .makeApiClient(CustomObjectsApi)
      .listNamespacedCustomObject({ ...CONNECTORS, namespace: PROJECT_NAMESPACE })
  ).items as Obj[];
  await agent.delete("Connector", first);
  await replicator.delete("Connector", await replicator.get("Connector", hubNamespace, first.metadata.name));
}
