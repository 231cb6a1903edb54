/**
 * A snapshot's API calls, both ways: the live store's counted rows in a range as the bundle's rows (each name listed
 * once), and a bundle's loaded into its store, where the Clients page reads them as it reads a live store's. A
 * snapshot without them (taken before snapshots carried them) counts its audit write requests, the calls it knows.
 */
import type { ApiCall } from "../audit/calls";
import type { ApiCallsBundle } from "../snapshot/format/schema";
import { fromShape } from "./api-calls";
import type { WriteStore } from "./store";

/** The most counted rows (and watch ends) a snapshot carries: past it, an export leaves them out and says so. */
export const MAX_EXPORTED_CALL_ROWS = 1_000_000;

/** The counted rows in [startMs, endMs); null when there are more than the bound. */
export async function exportApiCalls(store: WriteStore, range: { startMs: number; endMs: number }): Promise<ApiCallsBundle | null> {
  const found = await store.apiCalls().between(range.startMs, range.endMs, MAX_EXPORTED_CALL_ROWS);
  if (found === null) return null;
  const names: string[] = [];
  const indexes = new Map<string, number>();
  const at = (name: string) => indexes.get(name) ?? (indexes.set(name, names.push(name) - 1), names.length - 1);
  const rows = found.rows.map((r) => [
    Number(r.minuteMs),
    at(r.cluster),
    at(r.client),
    at(r.version),
    at(r.verb),
    at(r.target),
    Number(r.shape),
    at(r.flow),
    Number(r.calls),
  ]);
  const watchEnds = found.ends.map((e) => [
    Number(e.minuteMs),
    at(e.cluster),
    at(e.client),
    at(e.version),
    at(e.target),
    Number(e.namespaced),
    Number(e.lifetimeMs),
  ]);
  return { names, rows, watchEnds };
}

/** A counted row of a bundle as the call it counts. */
function callOf(names: readonly string[], row: readonly number[]): { cluster: string; call: ApiCall; n: number } {
  const [minuteMs, cluster, client, version, verb, target, shape, flow, calls] = row;
  const [user, agent] = JSON.parse(names[client]) as [string, string];
  const [flowSchema, priorityLevel] = names[flow] === "" ? ["", ""] : (JSON.parse(names[flow]) as [string, string]);
  const call: ApiCall = {
    minuteMs,
    user,
    agent,
    version: names[version],
    verb: names[verb],
    target: names[target],
    ...fromShape(shape),
    flowSchema,
    priorityLevel,
  };
  return { cluster: names[cluster], call, n: calls };
}

/** Loads a bundle's counted rows and watches' ends into the store; answers how many rows. */
export function importApiCalls(store: WriteStore, bundle: ApiCallsBundle): Promise<number> {
  return store.batch(async () => {
    const byCluster = new Map<string, { call: ApiCall; n: number }[]>();
    for (const row of bundle.rows) {
      const { cluster, call, n } = callOf(bundle.names, row);
      (byCluster.get(cluster) ?? byCluster.set(cluster, []).get(cluster)!).push({ call, n });
    }
    for (const [cluster, counts] of byCluster) await store.apiCalls().store(cluster, [{ data: { counts, watches: [], throughLine: 0 } }]);
    const ends = new Map<string, { call: ApiCall; endMinuteMs: number; lifetimeMs: number }[]>();
    for (const [minuteMs, cluster, client, version, target, namespaced, lifetimeMs] of bundle.watchEnds) {
      const [user, agent] = JSON.parse(bundle.names[client]) as [string, string];
      // Of a watch's end only its client, version, target and scope are kept.
      const call: ApiCall = {
        minuteMs,
        user,
        agent,
        version: bundle.names[version],
        verb: "watch",
        target: bundle.names[target],
        namespaced: namespaced === 1,
        code: "2xx",
        listFrom: "",
        paginated: false,
        selectors: 0,
        flowSchema: "",
        priorityLevel: "",
      };
      const name = bundle.names[cluster];
      (ends.get(name) ?? ends.set(name, []).get(name)!).push({ call, endMinuteMs: minuteMs, lifetimeMs });
    }
    for (const [cluster, mine] of ends) await store.apiCalls().addEnds(cluster, mine);
    return bundle.rows.length;
  });
}
