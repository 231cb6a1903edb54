/** The replay in the snapshot's forms: object histories (first versions plus field changes) and audit requests. */
import { diffObjects } from "../churn/diff";
import type { Json } from "../churn/json";
import { packAuditRows } from "../snapshot/format/audit-rows";
import type { AuditRequests, ObjectWrites } from "../snapshot/format/schema";
import type { Replay } from "./replay";
import { HUB_JOB, PROJECT_JOB, type ClusterName } from "./types";

export function replayObjectWrites({ sink }: Replay): ObjectWrites {
  const current = sink.initial.map((o) => (o === null ? undefined : (o as Json)));
  const writes: ObjectWrites["writes"] = sink.writes.map((w) => {
    const after = w.object === null ? undefined : (w.object as Json);
    const changes = diffObjects(current[w.objectIndex], after);
    current[w.objectIndex] = after;
    // A create carries the whole new object (path ""), a delete the whole old one: every version can be rebuilt.
    return { t: w.timeMs, o: w.objectIndex, verb: w.verb, ...(w.subresource ? { sub: w.subresource } : {}), by: w.manager, cls: w.cls, changes };
  });
  return {
    objects: sink.objects.map((ref, i) => ({
      cluster: ref.cluster,
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      namespace: ref.namespace,
      name: ref.name,
      initial: sink.initial[i],
    })),
    writes,
  };
}

const KUBE_VERB: Record<string, string> = { POST: "create", PUT: "update", PATCH: "patch", DELETE: "delete" };
const CLUSTER_OF: Record<string, ClusterName> = { [PROJECT_JOB]: "milo", [HUB_JOB]: "hub" };

/** The replay's requests as its audit log would record them: every Connector and Lease write, its writer, and its outcome. */
export function replayAuditRequests({ sink }: Replay): AuditRequests {
  return packAuditRows(
    sink.requests.map((q) => ({
      tsMs: q.timeMs,
      cluster: CLUSTER_OF[q.job],
      user: q.user,
      userAgent: q.userAgent,
      verb: KUBE_VERB[q.verb],
      group: q.group,
      resource: q.resource,
      subresource: q.subresource ?? "",
      namespace: q.namespace,
      name: q.name,
      code: q.code,
      // Every write the replay models changes its object; a refused one (409) is not classified.
      noop: q.code < 300 ? false : null,
    })),
    "The replay's audit log holds the writes it models one by one: Connectors on the project API server and the hub, and their Leases. " +
      "Other resources' writes (HTTPProxies, Gateways, Events…) appear only as rates on Write load.",
  );
}
