/**
 * A snapshot's audit requests, both ways: the live store's in a range as the bundle's rows, and a bundle's loaded into
 * its store's audit table, where the Clients view reads them as it reads a live store's.
 */
import { CallTally, writeCall } from "../audit/calls";
import { packAuditRows } from "../snapshot/format/audit-rows";
import type { AuditRequests } from "../snapshot/format/schema";
import type { AuditStore } from "./audit-store";
import type { WriteStore } from "./store";

/** The most audit requests a snapshot carries: past it, an export leaves them out and says so. */
export const MAX_EXPORTED_REQUESTS = 500_000;

/** The requests in (startMs, endMs]; null when there are more than the bound. */
export async function exportAuditRequests(audit: AuditStore, range: { startMs: number; endMs: number }): Promise<AuditRequests | null> {
  const rows = await audit.requestsBetween(range.startMs, range.endMs, MAX_EXPORTED_REQUESTS);
  if (rows === null) return null;
  return packAuditRows(rows);
}

/**
 * Loads a bundle's requests into the store's audit table. `countCalls`: a bundle that carries no API calls (taken
 * before snapshots did) has its write requests counted per client as the calls it knows of.
 */
export function importAuditRequests(store: WriteStore, audit: AuditRequests, countCalls: boolean): Promise<number> {
  const requests = store.audit();
  return store.batch(async () => {
    const calls = new Map<string, CallTally>();
    for (const [i, r] of audit.requests.entries()) {
      const { user, userAgent } = audit.clients[r.c];
      const { cluster, group, resource, namespace, name } = audit.targets[r.x];
      const record = { key: `snapshot/${i}`, tsMs: r.t, verb: r.verb, group, resource, subresource: r.sub ?? "", namespace, name, user, userAgent };
      await requests.addRequest(cluster, { ...record, code: r.code, latencyMs: null }, r.noop ?? null, r.ev ?? null);
      if (countCalls) (calls.get(cluster) ?? calls.set(cluster, new CallTally()).get(cluster)!).add(writeCall({ ...record, code: r.code, latencyMs: null }));
    }
    for (const [cluster, tally] of calls) await store.apiCalls().store(cluster, [{ data: tally.take() }]);
    return audit.requests.length;
  });
}
