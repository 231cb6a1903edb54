/**
 * Audit events written the way kube-apiserver writes them (field order, microsecond timestamps,
 * RequestReceived before ResponseComplete), and the HTTPRoute status-patch fix's scenario: a policy controller patching
 * every HTTPRoute's status every 10 s with nothing changed, among real changes and reads. The
 * scenario returns its ground truth, counted as it writes, never read back from the ingester.
 */
import { randomBytes } from "node:crypto";
import { createRng } from "@/lib/scenario/rng";

export interface EventSpec {
  auditID?: string;
  stage?: "RequestReceived" | "ResponseStarted" | "ResponseComplete" | "Panic";
  verb: string;
  user?: string;
  userAgent?: string;
  resource: string;
  group?: string;
  version?: string;
  namespace?: string;
  name?: string;
  subresource?: string;
  code?: number;
  receivedMs: number;
  latencyMs?: number;
  level?: "Metadata" | "Request" | "RequestResponse";
  requestObject?: unknown;
  responseObject?: unknown;
  /** v1beta1 keeps the legacy `timestamp` */
  apiVersion?: "audit.k8s.io/v1" | "audit.k8s.io/v1beta1";
  /** leave out requestReceivedTimestamp (old logs), keeping `timestamp` */
  withoutReceived?: boolean;
  /** objectRef.resourceVersion: the version the request object carried (an update's precondition) */
  precondition?: string;
}

/** RFC 3339 with microseconds, as the API server writes it. */
export function micro(ms: number): string {
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

export function auditEvent(spec: EventSpec): Record<string, unknown> {
  const apiVersion = spec.apiVersion ?? "audit.k8s.io/v1";
  const stage = spec.stage ?? "ResponseComplete";
  const path = `/apis/${spec.group ? `${spec.group}/${spec.version ?? "v1"}` : "v1"}${spec.namespace ? `/namespaces/${spec.namespace}` : ""}/${spec.resource}${spec.name ? `/${spec.name}` : ""}${spec.subresource ? `/${spec.subresource}` : ""}`;
  const event: Record<string, unknown> = {
    kind: "Event",
    apiVersion,
    level: spec.level ?? "RequestResponse",
    auditID: spec.auditID ?? randomBytes(16).toString("hex"),
    stage,
    requestURI: path,
    verb: spec.verb,
    user: { username: spec.user ?? "system:admin", groups: ["system:authenticated"] },
    sourceIPs: ["10.0.0.7"],
    userAgent: spec.userAgent ?? "kubectl/v1.31.0 (linux/amd64) kubernetes/abcdef0",
    objectRef: {
      resource: spec.resource,
      ...(spec.namespace ? { namespace: spec.namespace } : {}),
      ...(spec.name ? { name: spec.name } : {}),
      ...(spec.group ? { apiGroup: spec.group } : {}),
      apiVersion: spec.version ?? "v1",
      ...(spec.precondition ? { resourceVersion: spec.precondition } : {}),
      ...(spec.subresource ? { subresource: spec.subresource } : {}),
    },
  };
  if (stage !== "RequestReceived") event.responseStatus = { metadata: {}, code: spec.code ?? 200 };
  if (spec.requestObject !== undefined) event.requestObject = spec.requestObject;
  if (spec.responseObject !== undefined && stage !== "RequestReceived") event.responseObject = spec.responseObject;
  if (!spec.withoutReceived) event.requestReceivedTimestamp = micro(spec.receivedMs);
  event.stageTimestamp = micro(spec.receivedMs + (stage === "RequestReceived" ? 0 : (spec.latencyMs ?? 5)));
  if (apiVersion === "audit.k8s.io/v1beta1") event.timestamp = micro(spec.receivedMs);
  event.annotations = { "authorization.k8s.io/decision": "allow" };
  return event;
}

/** Both stages of one request, as two lines. */
export function requestLines(spec: EventSpec): string[] {
  const auditID = spec.auditID ?? randomBytes(16).toString("hex");
  const received = { ...spec, auditID, stage: "RequestReceived" as const, responseObject: undefined };
  return [JSON.stringify(auditEvent(received)), JSON.stringify(auditEvent({ ...spec, auditID }))];
}

export const POLICY_CONTROLLER = "system:serviceaccount:envoy-gateway-system:envoy-gateway";
export const POLICY_AGENT = "envoy-gateway/v1.2.0 (linux/amd64) kubernetes/policy";
export const ROUTE_OWNER = "system:serviceaccount:flux-system:kustomize-controller";

export function httpRoute(name: string, rv: number, hostnames: string[], parentsObserved: number) {
  return {
    apiVersion: "gateway.networking.k8s.io/v1",
    kind: "HTTPRoute",
    metadata: {
      name,
      namespace: "apps",
      resourceVersion: String(rv),
      uid: `uid-${name}`,
      managedFields: [{ manager: "envoy-gateway", operation: "Update", subresource: "status", time: micro(rv * 1000) }],
    },
    spec: { hostnames, parentRefs: [{ name: "edge" }], rules: [{ backendRefs: [{ name: `${name}-svc`, port: 80 }] }] },
    status: {
      parents: [
        {
          parentRef: { name: "edge" },
          controllerName: "gateway.envoyproxy.io/gatewayclass-controller",
          conditions: [{ type: "Accepted", status: "True", observedGeneration: parentsObserved, lastTransitionTime: micro(rv * 1000) }],
        },
      ],
    },
  };
}

export interface Seed003Truth {
  routes: string[];
  /** per route: status patches that changed nothing, real status changes, spec changes (routed) */
  noop: Record<string, number>;
  unrouted: Record<string, number>;
  routed: Record<string, number>;
  /** per route: the first write seen (no previous version to compare with) */
  firstSeen: number;
  /** every completed write request, by user */
  requestsByUser: Record<string, number>;
  reads: number;
  periodSeconds: number;
  lines: string[];
}

/**
 * `routes` HTTPRoutes over `minutes` from `startMs`: the policy controller patches each one's status
 * every 10 s (the response returns the unchanged object with its unchanged resourceVersion); every
 * 5 minutes the Accepted condition's lastTransitionTime moves (ignored by the profile: still a no-op);
 * every 7 minutes observedGeneration changes (unrouted); every 13 minutes Flux changes the hostnames
 * (routed). Reads are mixed in. Each write comes as RequestReceived + ResponseComplete.
 */
export function seed003(startMs: number, minutes: number, routes = 3): Seed003Truth {
  const names = Array.from({ length: routes }, (_, i) => `route-${i}`);
  const truth: Seed003Truth = { routes: names, noop: {}, unrouted: {}, routed: {}, firstSeen: 0, requestsByUser: {}, reads: 0, periodSeconds: 10, lines: [] };
  const state = new Map(names.map((n, i) => [n, { rv: 100 + i, hosts: [`${n}.example.com`], observed: 1, ltt: 100 + i, seen: false }]));
  let rv = 1000;
  const count = (rec: Record<string, number>, k: string) => (rec[k] = (rec[k] ?? 0) + 1);
  for (let s = 0; s < minutes * 60; s += 10) {
    names.forEach((name, i) => {
      const t = startMs + s * 1000 + i * 137;
      const st = state.get(name)!;
      let kind: "noop" | "unrouted" | "routed" = "noop";
      if (s > 0 && s % 780 === 0) {
        st.hosts = [`${name}.example.com`, `${name}-v${s}.example.com`];
        st.rv = ++rv;
        kind = "routed";
        truth.requestsByUser[ROUTE_OWNER] = (truth.requestsByUser[ROUTE_OWNER] ?? 0) + 1;
        truth.lines.push(
          ...requestLines({
            verb: "patch",
            user: ROUTE_OWNER,
            userAgent: "kustomize-controller/v1.4.0",
            resource: "httproutes",
            group: "gateway.networking.k8s.io",
            namespace: "apps",
            name,
            receivedMs: t - 50,
            responseObject: httpRoute(name, st.rv, st.hosts, st.observed),
          }),
        );
      } else if (s > 0 && s % 420 === 0) {
        st.observed++;
        st.rv = ++rv;
        kind = "unrouted";
      } else if (s > 0 && s % 300 === 0) {
        st.ltt = ++rv; // only the ignored lastTransitionTime moves…
        st.rv = rv; // …but it is stored, so the version changes
      }
      const route = httpRoute(name, st.rv, st.hosts, st.observed);
      (route.status.parents[0].conditions[0] as { lastTransitionTime: string }).lastTransitionTime = micro(st.ltt * 1000);
      truth.lines.push(
        ...requestLines({
          verb: "patch",
          user: POLICY_CONTROLLER,
          userAgent: POLICY_AGENT,
          resource: "httproutes",
          group: "gateway.networking.k8s.io",
          namespace: "apps",
          name,
          subresource: "status",
          receivedMs: t,
          responseObject: route,
        }),
      );
      count(truth.requestsByUser, POLICY_CONTROLLER);
      // Flux's spec change comes first and is the routed write; the status patch after it changes nothing.
      if (kind === "routed") count(truth.routed, name);
      if (!st.seen) {
        st.seen = true;
        truth.firstSeen++;
      } else count(kind === "unrouted" ? truth.unrouted : truth.noop, name);
      // A read between writes: skipped.
      truth.lines.push(
        JSON.stringify(
          auditEvent({
            verb: "get",
            resource: "httproutes",
            group: "gateway.networking.k8s.io",
            namespace: "apps",
            name,
            receivedMs: t + 3,
            responseObject: route,
          }),
        ),
      );
      truth.reads++;
    });
  }
  return truth;
}

/** What the simulated API server did with one request of `preconditionStorm`. */
export interface SimulatedWrite {
  auditID: string;
  verb: "update" | "patch";
  subresource: "" | "status";
  /** the version the client sent; "" for a patch */
  precondition: string;
  /** 409: the precondition was stale */
  code: 200 | 409;
  /** whether the write moved the object to a new version (false for a no-op and for a refused one) */
  changed: boolean;
  receivedMs: number;
  /** the object's version after it */
  version: string;
}

/**
 * One HTTPRoute under controllers that read it and update it (as client-go's Update does: the version read is the
 * precondition), often with nothing changed, sometimes with a stale version (409), among merge patches (no
 * precondition) and status updates, logged at Metadata level. The API server is simulated as etcd behaves: a
 * change moves the version, a no-op keeps it, a stale precondition fails. Its record of each request is the truth.
 */
export function preconditionStorm(
  startMs: number,
  steps: number,
  seed: number,
  name = "storm",
  { patchShare = 0.15 } = {},
): { lines: string[]; writes: SimulatedWrite[] } {
  const random = createRng(seed);
  const meta = {
    resource: "httproutes",
    group: "gateway.networking.k8s.io",
    namespace: "apps",
    name,
    level: "Metadata" as const,
    user: "policy",
    userAgent: "policy/v1.0.0",
  };
  let version = 100;
  const lines = requestLines({ ...meta, verb: "create", code: 201, receivedMs: startMs });
  const writes: SimulatedWrite[] = [];
  for (let step = 1; step <= steps; step++) {
    const roll = random();
    const auditID = `storm-${seed}-${step}`;
    const verb = roll < patchShare ? "patch" : "update";
    const subresource = random() < 0.3 ? "status" : "";
    const stale = verb === "update" && roll > 0.9;
    const precondition = verb === "patch" ? "" : String(stale ? version - 1 - Math.floor(random() * 3) : version);
    const changed = !stale && random() < 0.35;
    if (changed) version += 1 + Math.floor(random() * 5);
    const code = stale ? 409 : 200;
    const receivedMs = startMs + step * 50;
    writes.push({ auditID, verb, subresource, precondition, code, changed, receivedMs, version: String(version) });
    lines.push(...requestLines({ ...meta, auditID, verb, subresource, precondition, code, receivedMs }));
  }
  return { lines, writes };
}
