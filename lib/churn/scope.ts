/**
 * Which resources are cluster-scoped, so that their objects are keyed without a namespace. The API
 * server puts a Namespace's own name in `objectRef.namespace` for some verbs (`/api/v1/namespaces/NAME`)
 * and not for others, which would make one Namespace two objects.
 */
import type { Profile } from "./profiles";

/** The built-in cluster-scoped resources as `resource` (core) or `resource.group`. */
const BUILT_IN = [
  "namespaces",
  "nodes",
  "persistentvolumes",
  "componentstatuses",
  "clusterroles.rbac.authorization.k8s.io",
  "clusterrolebindings.rbac.authorization.k8s.io",
  "customresourcedefinitions.apiextensions.k8s.io",
  "apiservices.apiregistration.k8s.io",
  "storageclasses.storage.k8s.io",
  "csidrivers.storage.k8s.io",
  "csinodes.storage.k8s.io",
  "volumeattachments.storage.k8s.io",
  "volumeattributesclasses.storage.k8s.io",
  "priorityclasses.scheduling.k8s.io",
  "validatingwebhookconfigurations.admissionregistration.k8s.io",
  "mutatingwebhookconfigurations.admissionregistration.k8s.io",
  "validatingadmissionpolicies.admissionregistration.k8s.io",
  "validatingadmissionpolicybindings.admissionregistration.k8s.io",
  "mutatingadmissionpolicies.admissionregistration.k8s.io",
  "mutatingadmissionpolicybindings.admissionregistration.k8s.io",
  "certificatesigningrequests.certificates.k8s.io",
  "clustertrustbundles.certificates.k8s.io",
  "runtimeclasses.node.k8s.io",
  "ingressclasses.networking.k8s.io",
  "ipaddresses.networking.k8s.io",
  "servicecidrs.networking.k8s.io",
  "flowschemas.flowcontrol.apiserver.k8s.io",
  "prioritylevelconfigurations.flowcontrol.apiserver.k8s.io",
  "tokenreviews.authentication.k8s.io",
  "selfsubjectreviews.authentication.k8s.io",
  "subjectaccessreviews.authorization.k8s.io",
  "selfsubjectaccessreviews.authorization.k8s.io",
  "selfsubjectrulesreviews.authorization.k8s.io",
  "deviceclasses.resource.k8s.io",
  "resourceslices.resource.k8s.io",
  "gatewayclasses.gateway.networking.k8s.io",
];

const qualified = (group: string, resource: string) => (group ? `${resource}.${group}` : resource);

/** Whether (group, resource) is cluster-scoped: a built-in one, or one a profile says is (`scope: Cluster`). */
export function clusterScope(profiles: Profile[]): (group: string, resource: string) => boolean {
  const scoped = new Set(BUILT_IN);
  for (const p of profiles) {
    const key = qualified(p.group, p.resource);
    if (p.scope === "Cluster") scoped.add(key);
    else if (p.scope === "Namespaced") scoped.delete(key);
  }
  return (group, resource) => scoped.has(qualified(group, resource));
}
