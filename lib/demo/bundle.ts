/** The replay's object histories in the snapshot's object-writes form: first versions plus field changes. */
import { diffObjects } from "../churn/diff";
import type { Json } from "../churn/json";
import type { ObjectWrites } from "../snapshot/format/schema";
import type { Replay } from "./replay";

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
