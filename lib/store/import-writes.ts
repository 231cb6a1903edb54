/**
 * Loads a snapshot's object writes (first versions plus field changes) into a store through the
 * recorder's own core: each version is rebuilt, diffed after the profile's normalisation, and
 * classified, exactly as a watched version would be, along the same version chain. The writer is the
 * one the snapshot recorded.
 */
import { baselineOf } from "../churn/changes";
import { analyze, project, type Analysis } from "../churn/analyze";
import { diffObjects } from "../churn/diff";
import { traitsOf } from "../churn/conditions";
import { cloneJson, type Json } from "../churn/json";
import { applyChanges } from "../churn/paths";
import { profileFor, type Profile } from "../churn/profiles";
import type { ObjectWrites } from "../snapshot/format/schema";
import type { WriteRepository } from "./types";
import { keptBody, VersionChain } from "./version-chain";

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

/** Objects whose current version is kept in memory while a snapshot is imported (the store has the rest). */
const RECENT_OBJECTS = 5_000;

export function importObjectWrites(store: WriteRepository, writes: ObjectWrites, profiles: Profile[]): Promise<number> {
  // Each object's current version (null: not there), rebuilt write by write from the snapshot's changes.
  const chain = new VersionChain<Json | null>({
    read: async (key) => {
      const row = await store.latest(key);
      return row && (row.body === null ? null : (JSON.parse(row.body) as Json));
    },
    // A snapshot records no resourceVersions: the store keeps the body alone.
    write: (key, obj) => store.setLatest(key, "", obj === null ? null : JSON.stringify(obj)),
    weigh: () => 1,
    capacity: RECENT_OBJECTS,
  });
  const keyOf = (ref: ObjectWrites["objects"][number]) => ({
    cluster: ref.cluster,
    group: groupOf(ref.apiVersion),
    kind: ref.kind,
    namespace: ref.namespace,
    name: ref.name,
  });
  const profileOf = (ref: ObjectWrites["objects"][number], obj: Json | undefined) =>
    profileFor(
      profiles,
      groupOf(ref.apiVersion),
      ref.kind,
      ref.cluster,
      ((obj as Obj | undefined)?.metadata as Obj | undefined)?.labels as Record<string, string> | undefined,
    );
  return chain.batch(store, async () => {
    for (const ref of writes.objects) {
      if (ref.initial === null || ref.initial === undefined) continue;
      const initial = cloneJson(ref.initial as Json);
      chain.set(keyOf(ref), initial);
      const profile = profileOf(ref, initial);
      // Known before the snapshot's range: the state band starts from it.
      if (profile) {
        const projection = project(profile, initial);
        await store.recordFirstSeen(keyOf(ref), 0, projection, initial, baselineOf(profile, { obj: initial, projection }));
      }
    }
    for (const w of writes.writes) {
      const ref = writes.objects[w.o];
      const key = keyOf(ref);
      const before = (await chain.get(key)) ?? undefined;
      const after = applyChanges(before === undefined ? undefined : cloneJson(before), w.changes);
      chain.set(key, after ?? null);
      const profile = profileOf(ref, after ?? before);
      const analysed = profile ? analyze(profile, before, after) : unprofiled(before, after);
      // What only the audit log could tell (nothing changed; no bodies to tell) is kept as recorded.
      const analysis = w.cls === "no-op" || w.cls === "unknown" ? { ...analysed, cls: w.cls } : analysed;
      const body = keptBody(analysis.cls, before, after);
      await store.record(key, {
        tsMs: w.t,
        cls: analysis.cls,
        writer: w.by,
        source: "replay",
        heartbeat: analysis.heartbeat,
        changes: analysis.changes,
        projection: analysis.projection,
        ...(body === undefined ? {} : { body }),
        ...(analysis.change && { change: analysis.change }),
        // As the source stored them: a snapshot's versions leave out what profiles ignore (a clock the profile skips).
        ...(w.tr !== undefined ? { traits: traitsOf(w.tr) } : analysis.traits && { traits: analysis.traits }),
      });
    }
    return writes.writes.length;
  });
}
