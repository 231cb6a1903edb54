/**
 * The recorder's writes in a range as a snapshot's object writes: each object's version at the start
 * of the range (rebuilt from the version first listed or created, plus every recorded change up to
 * then) and each write in the range with its changes. A create carries the whole object and a
 * delete the whole last version, as the replay's do, so every version can be rebuilt on import.
 */
import { cloneJson, type Json } from "../churn/json";
import { traitsText } from "../churn/conditions";
import { applyChanges } from "../churn/paths";
import type { ObjectWrites } from "../snapshot/format/schema";
import type { ObjectHistory } from "../wire/objects";

/** What an export reads of a store: every object's writes in a range, up to a bound. */
export interface HistorySource {
  histories(fromMs: number, toMs: number, maxWrites: number): Promise<ObjectHistory[] | null>;
}

export const MAX_EXPORTED_WRITES = 500_000;

type Obj = { [key: string]: Json };

export async function exportObjectWrites(
  store: HistorySource,
  range: { startMs: number; endMs: number },
): Promise<{ writes: ObjectWrites | null; leftOut: number }> {
  const histories = await store.histories(range.startMs, range.endMs, MAX_EXPORTED_WRITES);
  if (histories === null) return { writes: null, leftOut: 0 };
  const out: ObjectWrites = { objects: [], writes: [] };
  let leftOut = 0;
  for (const history of histories) {
    let rebuilt: ReturnType<typeof rebuild>;
    try {
      rebuilt = rebuild(history, range.startMs);
    } catch {
      rebuilt = null; // a change that no longer fits the object it is applied to: leave the object out, say so
    }
    if (!rebuilt) {
      leftOut++;
      continue;
    }
    const o = out.objects.length;
    const { key } = history;
    const sample = (rebuilt.initial ?? rebuilt.writes.find((w) => w.body)?.body) as Obj | undefined;
    const apiVersion = typeof sample?.apiVersion === "string" ? sample.apiVersion : key.group ? `${key.group}/v1` : "v1";
    out.objects.push({ cluster: key.cluster, apiVersion, kind: key.kind, namespace: key.namespace, name: key.name, initial: rebuilt.initial ?? null });
    for (const w of rebuilt.writes) {
      const traits = w.traits && traitsText(w.traits);
      out.writes.push({
        t: w.tsMs,
        o,
        verb: w.cls === "create" || w.cls === "delete" ? w.cls : "update",
        by: w.writer,
        cls: w.cls,
        changes: w.changes,
        ...(traits ? { tr: traits } : {}),
      });
    }
  }
  out.writes.sort((x, y) => x.t - y.t);
  return { writes: out, leftOut };
}

/** Walks an object's history to the range start; null when its first version was never kept (stores older than bodies). */
function rebuild(history: ObjectHistory, startMs: number) {
  let state: Json | undefined = history.firstSeen ? cloneJson(history.firstSeen.body) : undefined;
  let known = state !== undefined;
  const inRange: (ObjectHistory["writes"][number] & { body?: Json })[] = [];
  let initial: Json | undefined;
  let started = false;
  for (const w of history.writes) {
    if (!started && w.tsMs > startMs) {
      initial = state === undefined ? undefined : cloneJson(state);
      started = true;
    }
    const before = state;
    if (w.cls === "create") {
      if (w.body === undefined) return null;
      state = cloneJson(w.body);
      known = true;
    } else if (w.cls === "delete") {
      state = undefined;
    } else {
      if (!known) return null;
      state = applyChanges(state, w.changes);
    }
    if (!started) continue;
    const changes =
      w.cls === "create" ? [{ path: "", after: w.body as Json }] : w.cls === "delete" ? [{ path: "", before: (before ?? w.body) as Json }] : w.changes;
    inRange.push({ ...w, changes });
  }
  return { initial, writes: inRange };
}
