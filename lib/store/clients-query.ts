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

/** A user-agent's parts, in the engine's SQL (SQLite's `instr` is PostgreSQL's `strpos`). */
function agentSql(dialect: "sqlite" | "postgres") {
  const instr = dialect === "postgres" ? "strpos" : "instr";
  /** The user-agent's name: `kube-controller-manager/v1.31.0 (linux/amd64) …` → `kube-controller-manager`. */
  const agent = `CASE WHEN ${instr}(user_agent, '/') > 0 THEN substr(user_agent, 1, ${instr}(user_agent, '/') - 1) ELSE user_agent END`;
  /** The user-agent's version: `kube-controller-manager/v1.31.0 (linux/amd64) …` → `v1.31.0`. */
  const rest = `substr(user_agent, ${instr}(user_agent, '/') + 1)`;
  const version = `CASE WHEN ${instr}(user_agent, '/') = 0 THEN '' WHEN ${instr}(${rest}, ' ') > 0 THEN substr(${rest}, 1, ${instr}(${rest}, ' ') - 1) ELSE ${rest} END`;
  return { AGENT: agent, CLIENT: `usr || ' · ' || ${agent}`, VERSION: version };
}
/** How many rows of a group meet a condition. */
const count = (condition: string) => `COUNT(*) FILTER (WHERE ${condition})`;
/** A request the API server answers without storing anything (the list is constant, not from the browser). */
const NEVER_STORED = `(resource IN (${NEVER_STORED_RESOURCES.map((r) => `'${r}'`).join(", ")}) OR subresource = '${NEVER_STORED_SUBRESOURCE}')`;
/** resource.group, as Write load names resources */
const QUALIFIED = "CASE WHEN grp = '' THEN resource ELSE resource || '.' || grp END";

export function stepFor(spanMs: number): number {
  return STEPS_MS.find((s) => spanMs / s <= 180) ?? STEPS_MS[STEPS_MS.length - 1];
}

export async function queryClients(
  audit: AuditStore,
  q: { startMs: number; endMs: number; cluster?: string; resource?: string; atMs?: number },
): Promise<ClientsAnswer> {
  const { AGENT, CLIENT, VERSION } = agentSql(audit.writes.dialect);
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

  const verbs = topBy(
    await all<{ k: string; client: string; n: number }>(
      `SELECT ${CLIENT} AS k, verb || CASE WHEN subresource = '' THEN '' ELSE ' /' || subresource END AS client, COUNT(*) AS n FROM audit_requests WHERE ${w} GROUP BY k, client`,
    ),
    Infinity,
  );
  const versions = new Map<string, ClientRow["versions"]>();
  for (const { client, ...v } of await all<{ client: string } & ClientRow["versions"][number]>(
    `SELECT ${CLIENT} AS client, ${VERSION} AS version, COUNT(*) AS writes, ${count("noop = 1")} AS noop, ${count("noop = 0")} AS changed,
       MIN(ts_ms) AS "firstMs", MAX(ts_ms) AS "lastMs" FROM audit_requests WHERE ${w}
     GROUP BY client, version ORDER BY client, "firstMs", version`,
  ))
    versions.set(client, [...(versions.get(client) ?? []), v]);
  const clients = (
    await all<Omit<ClientRow, "verbs" | "versions">>(
      `SELECT ${CLIENT} AS client, MIN(usr) AS "user", MIN(${AGENT}) AS agent, COUNT(*) AS writes, ${count("code >= 300 OR (code > 0 AND code < 200)")} AS failed,
       ${count("noop = 1")} AS noop, ${count("noop = 0")} AS changed, ${count(NEVER_STORED)} AS "neverStored" FROM audit_requests WHERE ${w} GROUP BY client ORDER BY writes DESC, client`,
    )
  ).map((c) => ({
    ...c,
    verbs: (verbs.get(c.client) ?? []).map((v) => ({ verb: v.client, writes: v.writes })),
    versions: versions.get(c.client) ?? [],
  }));
  const total = clients.reduce((sum, c) => sum + c.writes, 0);
  const evidence = (
    await all<ClientsAnswer["evidence"][number]>(
      `SELECT COALESCE(evidence, 'not kept') AS evidence, ${count("noop = 1")} AS noop, ${count("noop = 0")} AS changed FROM audit_requests WHERE ${w} AND noop IS NOT NULL
     GROUP BY 1`,
    )
  ).sort((a, b) => b.noop + b.changed - (a.noop + a.changed) || a.evidence.localeCompare(b.evidence));
  const unknown = (
    await all<{ n: number }>(
      `SELECT ${count("noop IS NULL AND (code = 0 OR code BETWEEN 200 AND 299)")} AS n FROM audit_requests WHERE ${w} AND verb IN ('update', 'patch')`,
    )
  )[0].n;
  const neverStored = clients.reduce((sum, c) => sum + c.neverStored, 0);
  const stepMs = stepFor(q.endMs - q.startMs);
  const top = new Set(clients.slice(0, TOP_CLIENTS).map((c) => c.client));
  const buckets = await all<{ client: string; bucket: number; n: number }>(
    `SELECT ${CLIENT} AS client, (ts_ms - 1) / ${stepMs} AS bucket, COUNT(*) AS n FROM audit_requests WHERE ${w} GROUP BY client, bucket`,
  );
  const series = timeSeries(buckets, top, q.startMs, q.endMs, stepMs);

  // Aliases differ from column names: SQLite groups by a column before an alias of the same name.
  const resourceName = `${QUALIFIED} || CASE WHEN subresource = '' THEN '' ELSE '/' || subresource END`;
  const resources = (
    await all<{ label: string; writes: number; noop: number; neverStored: number }>(
      `SELECT ${resourceName} AS label, COUNT(*) AS writes, ${count("noop = 1")} AS noop, ${count(NEVER_STORED)} AS "neverStored" FROM audit_requests WHERE ${w} GROUP BY label ORDER BY writes DESC, label LIMIT ${TOP_ROWS}`,
    )
  ).map(({ label, neverStored, ...r }) => ({ resource: label, ...r, neverStored: neverStored > 0 }));
  const resourceTop = topBy(
    await all<{ k: string; client: string; n: number }>(
      `SELECT ${resourceName} AS k, ${CLIENT} AS client, COUNT(*) AS n FROM audit_requests WHERE ${w} GROUP BY k, client`,
    ),
  );
  const objects = (
    await all<{ qualified: string; namespace: string; name: string; writes: number; noop: number }>(
      `SELECT ${QUALIFIED} AS qualified, namespace, name, COUNT(*) AS writes, ${count("noop = 1")} AS noop
     FROM audit_requests WHERE ${w} AND name != '' GROUP BY qualified, namespace, name ORDER BY writes DESC, qualified, namespace, name LIMIT ${TOP_ROWS}`,
    )
  ).map(({ qualified, ...o }) => ({ resource: qualified, ...o }));
  const objectKey = (o: { resource: string; namespace: string; name: string }) => `${o.resource}\u0000${o.namespace}\u0000${o.name}`;
  const objectTop = topBy(
    (
      await all<{ qualified: string; namespace: string; name: string; client: string; n: number }>(
        `SELECT ${QUALIFIED} AS qualified, namespace, name, ${CLIENT} AS client, COUNT(*) AS n
       FROM audit_requests WHERE ${w} AND name != '' GROUP BY qualified, namespace, name, client`,
      )
    ).map(({ qualified, namespace, name, ...r }) => ({ k: objectKey({ resource: qualified, namespace, name }), ...r })),
  );

  let comparison: ClientsAnswer["comparison"] = null;
  if (q.atMs !== undefined) {
    // Equal windows on both sides, as long as the shorter side of the range allows, in whole minutes.
    const fits = Math.min(q.atMs - q.startMs, q.endMs - q.atMs);
    const windowMs = fits >= 60_000 ? Math.floor(fits / 60_000) * 60_000 : fits;
    const split = `ts_ms <= ${Math.floor(q.atMs)}`; // an integer checked by the caller, as are the window's bounds
    const counts = await all<{ client: string; before: number; after: number }>(
      `SELECT ${CLIENT} AS client, ${count(split)} AS before, ${count(`NOT ${split}`)} AS after FROM audit_requests WHERE ${w} AND ts_ms > ? AND ts_ms <= ? GROUP BY client`,
      q.atMs - windowMs,
      q.atMs + windowMs,
    );
    comparison = {
      atMs: q.atMs,
      windowMs,
      rows: counts
        .map((c) => ({ ...c, changePct: c.before === 0 ? null : ((c.after - c.before) / c.before) * 100 }))
        .sort((a, b) => b.before + b.after - (a.before + a.after) || a.client.localeCompare(b.client)),
    };
  }
  return {
    startMs: q.startMs,
    endMs: q.endMs,
    stepMs,
    clusters: (await audit.writes.sql().all<{ cluster: string }>("SELECT DISTINCT cluster FROM audit_requests ORDER BY cluster")).map((r) => r.cluster),
    total,
    neverStored,
    clients,
    evidence,
    unknown,
    series,
    byResource: resources.map((r) => ({ ...r, top: resourceTop.get(r.resource) ?? [] })),
    byObject: objects.map((o) => ({ ...o, top: objectTop.get(objectKey(o)) ?? [] })),
    comparison,
  };
}

/** Per key, its entries by count (the top `keep`). */
function topBy(rows: { k: string; client: string; n: number }[], keep = 3): Map<string, TopEntry[]> {
  const out = new Map<string, TopEntry[]>();
  for (const r of rows) {
    const list = out.get(r.k) ?? [];
    list.push({ client: r.client, writes: r.n });
    out.set(r.k, list);
  }
  for (const list of out.values()) list.sort((a, b) => b.writes - a.writes || a.client.localeCompare(b.client)).splice(keep);
  return out;
}

/** Writes per step as chart series: every step of the range present (zero when nothing was written), the rest summed as "other". */
function timeSeries(buckets: { client: string; bucket: number; n: number }[], top: Set<string>, startMs: number, endMs: number, stepMs: number): Series[] {
  const first = Math.floor(startMs / stepMs);
  const last = Math.floor((endMs - 1) / stepMs);
  const byClient = new Map<string, Map<number, number>>();
  for (const b of buckets) {
    const name = top.has(b.client) ? b.client : "other clients";
    const points = byClient.get(name) ?? new Map<number, number>();
    points.set(b.bucket, (points.get(b.bucket) ?? 0) + b.n);
    byClient.set(name, points);
  }
  const order = [...top, ...(byClient.has("other clients") ? ["other clients"] : [])];
  return order.map((client) => {
    const points = byClient.get(client) ?? new Map<number, number>();
    const out: [number, number | null][] = [];
    // A bucket holds (k·step, (k+1)·step]; it is drawn at its end.
    for (let k = first; k <= last; k++) out.push([(k + 1) * stepMs, points.get(k) ?? 0]);
    const labels: Record<string, string> = client === "other clients" ? { client, [OTHER_LABEL]: "1" } : { client };
    return { labels, points: out };
  });
}
