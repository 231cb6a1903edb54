/**
 * The changes the Connector churn write-up weighs in "Why it is not a release", as the recorder would have recorded
 * them on the infrastructure control plane: network-services-operator's Deployment, on v0.26.4 since 7 September
 * and unchanged throughout; the iroh gateway's v0.1.4 image reaching stable sites at 14:45Z with infra v0.83.42,
 * which Flux applied at about 14:50Z; and the v0.83.43 rollback. The write-up gives no time for the rollback: 17:00Z
 * is the replay's assumption. Added after everything else is generated, so no other write of the replay moves.
 */
import { cloneJson } from "../churn/json";
import type { Obj } from "./objects";
import { touchManagedFields } from "./objects";
import type { ReplayParams } from "./params";
import type { ObjectRef, ReplaySink } from "./types";

const at = (text: string) => Date.parse(text);
export const RELEASES = {
  nsoSinceMs: at("2026-09-07T16:20:00Z"),
  gatewayRolloutMs: at("2026-09-11T14:45:00Z"),
  fluxAppliedMs: at("2026-09-11T14:50:00Z"),
  rollbackMs: at("2026-09-11T17:00:00Z"),
};

const NSO_IMAGE = "ghcr.io/datum-cloud/network-services-operator";
const GATEWAY_IMAGE = "ghcr.io/datum-cloud/iroh-gateway";
const TEMPLATE_FIELDS = { "f:spec": { "f:template": { "f:spec": { "f:containers": {} } } } };
const STATUS_FIELDS = { "f:status": { "f:lastAppliedRevision": {} } };

function deployment(namespace: string, name: string, image: string, appliedMs: number): Obj {
  const obj: Obj = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name, namespace, uid: `${name}-uid`, generation: 1 },
    spec: {
      replicas: 2,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { serviceAccountName: name, containers: [{ name: "manager", image }] },
      },
    },
  };
  touchManagedFields(obj, { manager: "kustomize-controller", operation: "Apply", fields: TEMPLATE_FIELDS }, appliedMs);
  return obj;
}

function kustomization(revision: string, appliedMs: number): Obj {
  const obj: Obj = {
    apiVersion: "kustomize.toolkit.fluxcd.io/v1",
    kind: "Kustomization",
    metadata: { name: "infra", namespace: "flux-system", uid: "infra-uid", generation: 1 },
    spec: { interval: "10m", path: "./clusters/production", sourceRef: { kind: "GitRepository", name: "infra" } },
    status: { lastAppliedRevision: revision, lastAttemptedRevision: revision },
  };
  touchManagedFields(obj, { manager: "kustomize-controller", operation: "Update", subresource: "status", fields: STATUS_FIELDS }, appliedMs);
  return obj;
}

const ref = (apiVersion: string, kind: string, resource: string, group: string, namespace: string, name: string): ObjectRef => ({
  cluster: "hub",
  apiVersion,
  kind,
  resource,
  group,
  namespace,
  name,
});

export function addReleases(sink: ReplaySink, params: ReplayParams): void {
  const before = params.startMs - 86_400_000;
  sink.addObject(
    ref("apps/v1", "Deployment", "deployments", "apps", "network-services-operator-system", "network-services-operator"),
    deployment("network-services-operator-system", "network-services-operator", `${NSO_IMAGE}:v0.26.4`, RELEASES.nsoSinceMs),
  );
  const gatewayInitial = deployment("datum-edge", "iroh-gateway", `${GATEWAY_IMAGE}:v0.1.3`, before);
  const gateway = sink.addObject(ref("apps/v1", "Deployment", "deployments", "apps", "datum-edge", "iroh-gateway"), gatewayInitial);
  const infraInitial = kustomization("v0.83.41@sha1:5f0c2e1d", before);
  const infra = sink.addObject(
    ref("kustomize.toolkit.fluxcd.io/v1", "Kustomization", "kustomizations", "kustomize.toolkit.fluxcd.io", "flux-system", "infra"),
    infraInitial,
  );
  const image = (tag: string, t: number) => {
    const next = cloneJson(gatewayInitial);
    (((next.spec as Obj).template as Obj).spec as Obj).containers = [{ name: "manager", image: `${GATEWAY_IMAGE}:${tag}` }];
    touchManagedFields(next, { manager: "kustomize-controller", operation: "Apply", fields: TEMPLATE_FIELDS }, t);
    return next;
  };
  const write = (timeMs: number, objectIndex: number, subresource: "status" | undefined, object: Obj, cause: string) =>
    sink.writes.push({
      timeMs,
      objectIndex,
      verb: "PATCH",
      ...(subresource && { subresource }),
      manager: "kustomize-controller",
      cls: "routed",
      cause,
      object,
    });
  write(RELEASES.gatewayRolloutMs, gateway, undefined, image("v0.1.4", RELEASES.gatewayRolloutMs), "release");
  write(RELEASES.fluxAppliedMs, infra, "status", kustomization("v0.83.42@sha1:a81b93c4", RELEASES.fluxAppliedMs), "release");
  write(RELEASES.rollbackMs, infra, "status", kustomization("v0.83.43@sha1:0d7e4b21", RELEASES.rollbackMs), "rollback");
  write(RELEASES.rollbackMs + 30_000, gateway, undefined, image("v0.1.3", RELEASES.rollbackMs + 30_000), "rollback");
}
