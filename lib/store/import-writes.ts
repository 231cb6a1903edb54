/**
 * Loads a snapshot's object writes (first versions plus field changes) into a store through the
 * recorder's own core: each version is rebuilt, diffed after the profile's normalisation, and
 * classified, exactly as a watched version would be. The writer is the one the snapshot recorded.
 */
import { analyze, project, type Analysis } from "../churn/analyze";
import { diffObjects } from "../churn/diff";
import type { Json } from "../churn/json";
import { applyChanges } from "../churn/paths";
import { profileFor, type Profile } from "../churn/profiles";
import type { ObjectWrites } from "../snapshot/format/schema";
import type { WriteStore } from "./store";

type Obj = { [key: string]: Json };

export function groupOf(apiVersion: string): string {
  return apiVersion.includes("/") ? apiVersion.slice(0, apiVersion.indexOf("/")) : "";
}

/** Without a profile: still record what changed, with nothing to say about routing. */
function unprofiled(before: Json | undefined, after: Json | undefined): Analysis {
  if (before === undefined) return { cls: "create", changes: [], writer: "unknown", heartbeat: false, projection: {} };
  if (after === undefined) return { cls: "delete", changes: [], writer: "unknown", heartbeat: false, projection: {} };
  return { cls: "unrouted", changes: diffObjects(before, after), writer: "unknown", heartbeat: false, projection: {} };
}

export function importObjectWrites(store: WriteStore, writes: ObjectWrites, profiles: Profile[]): number {
  const current: (Json | undefined)[] = writes.objects.map((o) => (o.initial === null || o.initial === undefined ? undefined : structuredClone(o.initial as Json)));
  const keyOf = (ref: ObjectWrites["objects"][number]) => ({ cluster: ref.cluster, group: groupOf(ref.apiVersion), kind: ref.kind, namespace: ref.namespace, name: ref.name });
  const profileOf = (ref: ObjectWrites["objects"][number], obj: Json | undefined) =>
    profileFor(profiles, groupOf(ref.apiVersion), ref.kind, ref.cluster, ((obj as Obj | undefined)?.metadata as Obj | undefined)?.labels as Record<string, string> | undefined);
  return store.batch(() => {
    writes.objects.forEach((ref, i) => {
      const profile = profileOf(ref, current[i]);
      // Known before the snapshot's range: the state band starts from it.
      if (current[i] !== undefined && profile) store.recordFirstSeen(keyOf(ref), 0, project(profile, current[i]), current[i]);
    });
    for (const w of writes.writes) {
      const ref = writes.objects[w.o];
      const before = current[w.o];
      const after = applyChanges(before === undefined ? undefined : structuredClone(before), w.changes);
      current[w.o] = after;
      const profile = profileOf(ref, after ?? before);
      const analysed = profile ? analyze(profile, before, after) : unprofiled(before, after);
      // What only the audit log could tell (nothing changed; no bodies to tell) is kept as recorded.
      const analysis = w.cls === "no-op" || w.cls === "unknown" ? { ...analysed, cls: w.cls } : analysed;
      store.record(
        keyOf(ref),
        {
          tsMs: w.t,
          cls: analysis.cls,
          writer: w.by,
          source: "replay",
          heartbeat: analysis.heartbeat,
          changes: analysis.changes,
          projection: analysis.projection,
          ...(analysis.cls === "create" && after !== undefined ? { body: after } : analysis.cls === "delete" && before !== undefined ? { body: before } : {}),
        },
      );
    }
    return writes.writes.length;
  });
}
