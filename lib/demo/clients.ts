/**
 * Who the replay's writers are to the API server: the user and user agent each request carries, as an
 * audit log would record them. The agents run the DatumConnect desktop app, whose v0.1.4 release reaches
 * half of them (chosen by name, not by the seeded generator, so the simulation's numbers stay as they are)
 * within twelve hours of its marker.
 */
import { SEED_MARKERS } from "./params";
import type { ClusterName } from "./types";

export interface RequestClient {
  user: string;
  userAgent: string;
}

const NSO_VERSION = "v0.26.4";
const AGENT_RELEASE_MS = SEED_MARKERS.find((m) => m.label === "DatumConnect v0.1.4")?.timeMs ?? 0;

/** A stable small number from a name (FNV-1a), so an agent's upgrade time does not draw on the generator. */
function nameHash(name: string): number {
  let h = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) h = Math.imul(h ^ name.charCodeAt(i), 0x01000193) >>> 0;
  return h;
}

function agentVersion(connector: string, t: number): string {
  const h = nameHash(connector);
  const upgradedMs = AGENT_RELEASE_MS + (h % 43_200_000);
  return h % 2 === 0 && t >= upgradedMs ? "v0.1.4" : "v0.1.3";
}

/**
 * The client of a write by `manager` (its field manager) at `t`: on the hub, the network-services-operator's
 * replicator writes with its own service account there; the agent's identity is its project's service account.
 */
export function clientOf(manager: string, cluster: ClusterName, namespace: string, connector: string, t: number): RequestClient {
  switch (manager) {
    case "network-services-operator":
      return cluster === "hub"
        ? {
            user: "system:serviceaccount:network-services-operator-system:gateway-resource-replicator",
            userAgent: `network-services-operator/${NSO_VERSION} (linux/amd64) kubernetes/$Format`,
          }
        : {
            user: "system:serviceaccount:network-services-operator-system:network-services-operator",
            userAgent: `network-services-operator/${NSO_VERSION} (linux/amd64) kubernetes/$Format`,
          };
    case "datum-connect":
      return { user: `system:serviceaccount:${namespace}:datum-connect`, userAgent: `datum-connect/${agentVersion(connector, t)} (darwin/arm64)` };
    case "datum-cloud-portal":
      return { user: "system:serviceaccount:datum-cloud:portal", userAgent: "datum-cloud-portal/v2.14.0" };
    case "generic-garbage-collector":
      return {
        user: "system:serviceaccount:kube-system:generic-garbage-collector",
        userAgent: "kube-controller-manager/v1.33.4 (linux/amd64) kubernetes/74cdb42/system:serviceaccount:kube-system:generic-garbage-collector",
      };
    default:
      throw new Error(`the replay has no client for the field manager ${manager}`);
  }
}
