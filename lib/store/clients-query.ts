/**
 * The Clients view's questions of the audit requests: requests by client (user and user-agent name, without its
 * version, so a rollout does not split a client in two) over time, with each client's versions, per resource, per
 * object, and before/after a chosen time.
 */
import { NEVER_STORED_RESOURCES, NEVER_STORED_SUBRESOURCE } from "../churn/never-stored";
import { OTHER_LABEL } from "../panels/top-n";
import type { Series } from "../promql/types";
import type { ClientRow, ClientsAnswer, TopEntry } from "../wire/clients";
import type { AuditStore } from "./audit-store";

const TOP_CLIENTS = 8;
const TOP_ROWS = 25;
const STEPS_MS = [60_000, 300_000, 900_000, 1_800_000, 3_600_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000];

/** How many rows of a group meet a condition. */
const count = (condition: string) => `COUNT(*) FILTER (WHERE ${condition})`;
const FAILED = "code >= 300 OR (code > 0 AND code < 200)";
/** Successful writes whose effect is not known: logged without bodies and not decided by a precondition. */
const UNKNOWN = "noop IS NULL AND (code = 0 OR code BETWEEN 200 AND 299) AND verb IN ('update', 'patch')";

/** A request the API server answers without storing anything. */
const neverStored = (resource: string, subresource: string) =>
  (NEVER_STORED_RESOURCES as readonly string[]).includes(resource) || subresource === NEVER_STORED_SUBRESOURCE;
/** resource.group, as Write load names resources */
const qualified = (resource: string, grp: string) => (grp === "" ? resource : `${resource}.${grp}`);
/** The user-agent's name: `kube-controller-manager/v1.31.0 (linux/amd64) …` → `kube-controller-manager`. */
const agentOf = (userAgent: string) => (userAgent.includes("/") ? userAgent.slice(0, userAgent.indexOf("/")) : userAgent);
/** The user-agent's version: `kube-controller-manager/v1.31.0 (linux/amd64) …` → `v1.31.0`. */
function versionOf(userAgent: string): string {
  if (!userAgent.includes("/")) return "";
  const rest = userAgent.slice(userAgent.indexOf("/") + 1);
  return rest.includes(" ") ? rest.slice(0, rest.indexOf(" ")) : rest;
}
const clientOf = (usr: string, userAgent: string) => `${usr} · ${agentOf(userAgent)}`;
/** Text order as the store keeps it (by code unit), the same on both engines. */
const byText = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** Adds a row's counts into a map's entry for `key`, made by `empty` the first time. */
function tally<K, V>(map: Map<K, V>, key: K, empty: () => V, add: (entry: V) => void): void {
  let entry = map.get(key);
  if (entry === undefined) map.set(key, (entry = empty()));
  add(entry);
}

export function stepFor(spanMs: number): number {
  return STEPS_MS.find((s) => spanMs / s <= 180) ?? STEPS_MS[STEPS_MS.length - 1];
}

/** One group of the range's requests: every dimension the view splits by, and its counts. */
interface Cell {
  usr: string;
  agent: string;
  verb: string;
  subresource: string;
  grp: string;
  resource: string;
  evidence: string;
  n: number;
  noop: number;
  changed: number;
  failed: number;
  unknown: number;
  firstMs: number;
  lastMs: number;
}

/**
 * The view is worked out from three groupings of the range (every dimension but time and the object; each client's
 * steps; the object and client), and a fourth for before/after: grouping by the stored columns and naming clients
 * here, rather than asking the store once per table with the names worked out row by row, reads each request three
 * times instead of ten. The groupings grow with the clients and what each writes, and only the steps' with time.
 */
export async function queryClients(
  audit: AuditStore,
  q: { startMs: number; endMs: number; cluster?: string; resource?: string; atMs?: number },
): Promise<ClientsAnswer> {
  const where = ["ts_ms > ?", "ts_ms <= ?"];
  const params: (string | number)[] = [q.startMs, q.endMs];
  if (q.cluster) {
    where.push("cluster = ?");
    params.push(q.cluster);
  }
  if (q.resource) {
    const dot = q.resource.indexOf(".");
    where.push("resource = ?", "grp = ?");
    params.push(dot === -1 ? q.resource : q.resource.slice(0, dot), dot === -1 ? "" : q.resource.slice(dot + 1));
  }
  const w = where.join(" AND ");
  const all = <T>(sql: string, ...extra: (string | number)[]) => audit.writes.sql().all<T>(sql, [...params, ...extra]);
  const stepMs = stepFor(q.endMs - q.startMs);

  const cells = await all<Cell>(
    `SELECT usr, user_agent AS agent, verb, subresource, grp, resource, COALESCE(evidence, 'not kept') AS evidence,
       COUNT(*) AS n, ${count("noop = 1")} AS noop, ${count("noop = 0")} AS changed, ${count(FAILED)} AS failed, ${count(UNKNOWN)} AS unknown,
       MIN(ts_ms) AS "firstMs", MAX(ts_ms) AS "lastMs"
     FROM audit_requests WHERE ${w} GROUP BY usr, user_agent, verb, subresource, grp, resource, evidence`,
  );
  const rows = new Map<string, Omit<ClientRow, "verbs" | "versions"> & { verbs: Map<string, number>; versions: Map<string, ClientRow["versions"][number]> }>();
  const evidence = new Map<string, { noop: number; changed: number }>();
  const resources = new Map<string, { writes: number; noop: number; neverStored: boolean; clients: Map<string, number> }>();
  const buckets = new Map<string, Map<number, number>>();
  let unknown = 0;
  for (const c of cells) {
    const client = clientOf(c.usr, c.agent);
    const never = neverStored(c.resource, c.subresource);
    tally(
      rows,
      client,
      () => ({
        client,
        user: c.usr,
        agent: agentOf(c.agent),
        writes: 0,
        failed: 0,
        noop: 0,
        changed: 0,
        neverStored: 0,
        verbs: new Map(),
        versions: new Map(),
      }),
      (row) => {
        row.writes += c.n;
        row.failed += c.failed;
        row.noop += c.noop;
        row.changed += c.changed;
        if (never) row.neverStored += c.n;
        const verb = c.verb + (c.subresource === "" ? "" : ` /${c.subresource}`);
        row.verbs.set(verb, (row.verbs.get(verb) ?? 0) + c.n);
        const version = versionOf(c.agent);
        tally(
          row.versions,
          version,
          () => ({ version, writes: 0, noop: 0, changed: 0, firstMs: c.firstMs, lastMs: c.lastMs }),
          (v) => {
            v.writes += c.n;
            v.noop += c.noop;
            v.changed += c.changed;
            v.firstMs = Math.min(v.firstMs, c.firstMs);
            v.lastMs = Math.max(v.lastMs, c.lastMs);
          },
        );
      },
    );
    if (c.noop + c.changed > 0)
      tally(
        evidence,
        c.evidence,
        () => ({ noop: 0, changed: 0 }),
        (e) => {
          e.noop += c.noop;
          e.changed += c.changed;
        },
      );
    unknown += c.unknown;
    const label = qualified(c.resource, c.grp) + (c.subresource === "" ? "" : `/${c.subresource}`);
    tally(
      resources,
      label,
      () => ({ writes: 0, noop: 0, neverStored: false, clients: new Map() }),
      (r) => {
        r.writes += c.n;
        r.noop += c.noop;
        r.neverStored ||= never;
        r.clients.set(client, (r.clients.get(client) ?? 0) + c.n);
      },
    );
  }
  const clients: ClientRow[] = [...rows.values()]
    .sort((a, b) => b.writes - a.writes || byText(a.client, b.client))
    .map(({ verbs, versions, ...row }) => ({
      ...row,
      verbs: topOf(verbs, Infinity).map((v) => ({ verb: v.client, writes: v.writes })),
      versions: [...versions.values()].sort((a, b) => a.firstMs - b.firstMs || byText(a.version, b.version)),
    }));
  const top = new Set(clients.slice(0, TOP_CLIENTS).map((c) => c.client));
  // Each client's writes per step: a grouping of its own, so that the one above does not grow with the steps.
  for (const b of await all<{ usr: string; agent: string; bucket: number; n: number }>(
    `SELECT usr, user_agent AS agent, (ts_ms - 1) / ${stepMs} AS bucket, COUNT(*) AS n FROM audit_requests WHERE ${w} GROUP BY usr, user_agent, bucket`,
  ))
    tally(
      buckets,
      clientOf(b.usr, b.agent),
      () => new Map(),
      (points) => points.set(b.bucket, (points.get(b.bucket) ?? 0) + b.n),
    );

  const objectCells = await all<{ grp: string; resource: string; namespace: string; name: string; usr: string; agent: string; n: number; noop: number }>(
    `SELECT grp, resource, namespace, name, usr, user_agent AS agent, COUNT(*) AS n, ${count("noop = 1")} AS noop
     FROM audit_requests WHERE ${w} AND name != '' GROUP BY grp, resource, namespace, name, usr, user_agent`,
  );
  const objects = new Map<string, { resource: string; namespace: string; name: string; writes: number; noop: number; clients: Map<string, number> }>();
  for (const o of objectCells) {
    const resource = qualified(o.resource, o.grp);
    const client = clientOf(o.usr, o.agent);
    tally(
      objects,
      `${resource}\u0000${o.namespace}\u0000${o.name}`,
      () => ({ resource, namespace: o.namespace, name: o.name, writes: 0, noop: 0, clients: new Map() }),
      (entry) => {
        entry.writes += o.n;
        entry.noop += o.noop;
        entry.clients.set(client, (entry.clients.get(client) ?? 0) + o.n);
      },
    );
  }

  let comparison: ClientsAnswer["comparison"] = null;
  if (q.atMs !== undefined) {
    // Equal windows on both sides, as long as the shorter side of the range allows, in whole minutes.
    const fits = Math.min(q.atMs - q.startMs, q.endMs - q.atMs);
    const windowMs = fits >= 60_000 ? Math.floor(fits / 60_000) * 60_000 : fits;
    const split = `ts_ms <= ${Math.floor(q.atMs)}`; // an integer checked by the caller, as are the window's bounds
    const counts = new Map<string, { client: string; before: number; after: number }>();
    for (const c of await all<{ usr: string; agent: string; before: number; after: number }>(
      `SELECT usr, user_agent AS agent, ${count(split)} AS before, ${count(`NOT ${split}`)} AS after FROM audit_requests WHERE ${w} AND ts_ms > ? AND ts_ms <= ? GROUP BY usr, user_agent`,
      q.atMs - windowMs,
      q.atMs + windowMs,
    )) {
      const client = clientOf(c.usr, c.agent);
      tally(
        counts,
        client,
        () => ({ client, before: 0, after: 0 }),
        (entry) => {
          entry.before += c.before;
          entry.after += c.after;
        },
      );
    }
    comparison = {
      atMs: q.atMs,
      windowMs,
      rows: [...counts.values()]
        .map((c) => ({ ...c, changePct: c.before === 0 ? null : ((c.after - c.before) / c.before) * 100 }))
        .sort((a, b) => b.before + b.after - (a.before + a.after) || a.client.localeCompare(b.client)),
    };
  }
  const byRank =
    <T extends { writes: number }>(key: (entry: T) => string) =>
    (a: T, b: T) =>
      b.writes - a.writes || byText(key(a), key(b));
  return {
    startMs: q.startMs,
    endMs: q.endMs,
    stepMs,
    clusters: (await audit.writes.sql().all<{ cluster: string }>("SELECT DISTINCT cluster FROM audit_requests ORDER BY cluster")).map((r) => r.cluster),
    total: clients.reduce((sum, c) => sum + c.writes, 0),
    neverStored: clients.reduce((sum, c) => sum + c.neverStored, 0),
    clients,
    evidence: [...evidence.entries()]
      .map(([kind, e]) => ({ evidence: kind as ClientsAnswer["evidence"][number]["evidence"], ...e }))
      .sort((a, b) => b.noop + b.changed - (a.noop + a.changed) || a.evidence.localeCompare(b.evidence)),
    unknown,
    series: timeSeries(buckets, top, q.startMs, q.endMs, stepMs),
    byResource: [...resources.entries()]
      .map(([resource, { clients: byClient, ...r }]) => ({ resource, ...r, top: topOf(byClient) }))
      .sort(byRank((r) => r.resource))
      .slice(0, TOP_ROWS),
    byObject: [...objects.values()]
      .sort(byRank((o) => `${o.resource}\u0000${o.namespace}\u0000${o.name}`))
      .slice(0, TOP_ROWS)
      .map(({ clients: byClient, ...o }) => ({ ...o, top: topOf(byClient) })),
    comparison,
  };
}

/** A count per client as its entries by count, the top `keep`. */
function topOf(counts: Map<string, number>, keep = 3): TopEntry[] {
  return [...counts.entries()]
    .map(([client, writes]) => ({ client, writes }))
    .sort((a, b) => b.writes - a.writes || a.client.localeCompare(b.client))
    .slice(0, keep);
}

/** Writes per step as chart series: every step of the range present (zero when nothing was written), the rest summed as "other". */
function timeSeries(byClient: Map<string, Map<number, number>>, top: Set<string>, startMs: number, endMs: number, stepMs: number): Series[] {
  const first = Math.floor(startMs / stepMs);
  const last = Math.floor((endMs - 1) / stepMs);
  const other = new Map<number, number>();
  for (const [client, points] of byClient) if (!top.has(client)) for (const [bucket, n] of points) other.set(bucket, (other.get(bucket) ?? 0) + n);
  const order = [...top, ...(other.size > 0 ? ["other clients"] : [])];
  return order.map((client) => {
    const points = client === "other clients" ? other : (byClient.get(client) ?? new Map<number, number>());
    const out: [number, number | null][] = [];
    // A bucket holds (k·step, (k+1)·step]; it is drawn at its end.
    for (let k = first; k <= last; k++) out.push([(k + 1) * stepMs, points.get(k) ?? 0]);
    const labels: Record<string, string> = client === "other clients" ? { client, [OTHER_LABEL]: "1" } : { client };
    return { labels, points: out };
  });
}
