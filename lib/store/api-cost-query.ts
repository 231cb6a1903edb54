/**
 * The API cost view's questions of the counted calls (api-calls.ts): every call by client in a range, over time by
 * verb and by client, each watch's median lifetime per client and kind, and two windows side by side. Counts are per
 * minute: a minute's calls count where the minute starts inside the range.
 */
import { clientLabel, compareCosts, costRows, figuresOf, type LifetimeCount } from "../analysis/api-cost";
import { agentParts } from "../audit/calls";
import { OTHER_LABEL } from "../panels/top-n";
import type { Series } from "../promql/types";
import type { ApiCostAnswer, CallCount, CostWindow } from "../wire/api-cost";
import { NAME_CAPS, OTHER_CLIENT, OTHER_NAME } from "./api-calls";
import { stepFor } from "./clients-query";
import type { StoreConnection } from "./types";

const TOP_CLIENTS = 8;

export interface ApiCostQuery {
  startMs: number;
  endMs: number;
  cluster?: string;
  /** resource or resource.group: its calls only (its subresources' too) */
  resource?: string;
  /** a component (user agent name, or user) or a client (`user · agent`): the calls by verb are of it */
  client?: string;
  compare?: { before: CostWindow; after: CostWindow };
}

interface Filter {
  where: string;
  params: (string | number)[];
}

export class ApiCostQueries {
  constructor(private readonly connection: StoreConnection) {}

  private sql() {
    return this.connection.sql();
  }

  /** The rows of a window, and of the range's cluster and resource. */
  private filter(q: ApiCostQuery, window: CostWindow, alias = "c"): Filter {
    const where = [`${alias}.ts_ms >= ?`, `${alias}.ts_ms < ?`];
    const params: (string | number)[] = [window.startMs, window.endMs];
    if (q.cluster) {
      where.push("n.cluster = ?");
      params.push(q.cluster);
    }
    if (q.resource) {
      where.push("(t.name = ? OR substr(t.name, 1, length(?) + 1) = ? || '/')");
      params.push(q.resource, q.resource, q.resource);
    }
    return { where: where.join(" AND "), params };
  }

  /** Calls in a window by every dimension, their minutes summed. */
  async counts(q: ApiCostQuery, window: CostWindow): Promise<CallCount[]> {
    const f = this.filter(q, window);
    const rows = await this.sql().all<{
      client: string;
      version: string;
      verb: string;
      target: string;
      namespaced: number;
      code: CallCount["code"];
      listFrom: CallCount["listFrom"];
      paginated: number;
      selectors: number;
      flow: string;
      calls: number;
    }>(
      `SELECT n.name AS client, v.name AS version, c.verb, t.name AS target, c.namespaced, c.code, c.list_from AS "listFrom", c.paginated, c.selectors,
         f.name AS flow, SUM(c.calls) AS calls
       FROM api_calls c JOIN api_names n ON n.id = c.client_id JOIN api_names v ON v.id = c.version_id JOIN api_names t ON t.id = c.target_id
         JOIN api_names f ON f.id = c.flow_id
       WHERE ${f.where}
       GROUP BY n.name, v.name, c.verb, t.name, c.namespaced, c.code, c.list_from, c.paginated, c.selectors, f.name`,
      f.params,
    );
    return rows.map(({ client, namespaced, paginated, selectors, flow, calls, ...r }) => {
      const [user, agent] = JSON.parse(client) as [string, string];
      const [flowSchema, priorityLevel] = flow === "" ? ["", ""] : (JSON.parse(flow) as [string, string]);
      return {
        ...r,
        user,
        agent,
        namespaced: namespaced === 1,
        paginated: paginated === 1,
        selectors: Number(selectors),
        flowSchema,
        priorityLevel,
        calls: Number(calls),
      };
    });
  }

  /** Each client's watches that ended in the window, per kind: how many and their exact median lifetime. */
  private async lifetimes(q: ApiCostQuery): Promise<LifetimeCount[]> {
    const f = this.filter(q, q, "w");
    const rows = await this.sql().all<{ client: string; target: string; ended: number; median: number }>(
      `WITH e AS (
         SELECT n.name AS client, t.name AS target, w.lifetime_ms,
           ROW_NUMBER() OVER (PARTITION BY n.name, t.name ORDER BY w.lifetime_ms) AS rn, COUNT(*) OVER (PARTITION BY n.name, t.name) AS cnt
         FROM api_watch_ends w JOIN api_names n ON n.id = w.client_id JOIN api_names t ON t.id = w.target_id WHERE ${f.where})
       SELECT client, target, cnt AS ended, AVG(lifetime_ms) AS median FROM e WHERE rn IN ((cnt + 1) / 2, (cnt + 2) / 2) GROUP BY client, target, cnt`,
      f.params,
    );
    return rows
      .map(({ client, target, ended, median }) => {
        const [user, agent] = JSON.parse(client) as [string, string];
        return { user, agent, target, ended: Number(ended), medianMs: Number(median) };
      })
      .sort((a, b) => b.ended - a.ended || a.target.localeCompare(b.target));
  }

  /** Successful writes that changed nothing, per client (`user · agent`), from the writes stored one by one. */
  private async noops(q: ApiCostQuery): Promise<Map<string, number>> {
    const where = ["ts_ms >= ?", "ts_ms < ?", "noop IS NOT NULL"];
    const params: (string | number)[] = [q.startMs, q.endMs];
    if (q.cluster) {
      where.push("cluster = ?");
      params.push(q.cluster);
    }
    const rows = await this.sql().all<{ usr: string; agent: string; noop: number }>(
      `SELECT usr, user_agent AS agent, SUM(noop) AS noop FROM audit_requests WHERE ${where.join(" AND ")} GROUP BY usr, user_agent`,
      params,
    );
    const out = new Map<string, number>();
    for (const r of rows) {
      const name = clientLabel(r.usr, agentParts(r.agent).agent);
      out.set(name, (out.get(name) ?? 0) + Number(r.noop));
    }
    return out;
  }

  /** Calls per step, by verb (of the clients `clientIds` names, or of all) and by client. */
  private async series(q: ApiCostQuery, stepMs: number, chosen: (user: string, agent: string) => boolean): Promise<{ byVerb: Series[]; byClient: Series[] }> {
    const f = this.filter(q, q);
    const rows = await this.sql().all<{ bucket: number; client: string; verb: string; calls: number }>(
      `SELECT c.ts_ms / ${stepMs} AS bucket, n.name AS client, c.verb, SUM(c.calls) AS calls
       FROM api_calls c JOIN api_names n ON n.id = c.client_id JOIN api_names t ON t.id = c.target_id WHERE ${f.where}
       GROUP BY c.ts_ms / ${stepMs}, n.name, c.verb`,
      f.params,
    );
    const verbs = new Map<string, Map<number, number>>();
    const clients = new Map<string, Map<number, number>>();
    const totals = new Map<string, number>();
    const add = (into: Map<string, Map<number, number>>, name: string, bucket: number, n: number) => {
      const points = into.get(name) ?? into.set(name, new Map()).get(name)!;
      points.set(bucket, (points.get(bucket) ?? 0) + n);
    };
    for (const r of rows) {
      const [user, agent] = JSON.parse(r.client) as [string, string];
      const bucket = Math.floor(Number(r.bucket));
      const calls = Number(r.calls);
      const name = clientLabel(user, agent);
      if (chosen(user, agent)) add(verbs, r.verb, bucket, calls);
      add(clients, name, bucket, calls);
      totals.set(name, (totals.get(name) ?? 0) + calls);
    }
    const top = new Set(
      [...totals]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .slice(0, TOP_CLIENTS)
        .map(([name]) => name),
    );
    const folded = new Map<string, Map<number, number>>();
    for (const [name, points] of clients) for (const [bucket, n] of points) add(folded, top.has(name) ? name : "other clients", bucket, n);
    const first = Math.floor(q.startMs / stepMs);
    const last = Math.floor((q.endMs - 1) / stepMs);
    const seriesOf = (label: string, name: string, points: Map<number, number>, other = false): Series => {
      const out: [number, number | null][] = [];
      // A bucket holds [k·step, (k+1)·step) of minutes; it is drawn at its end.
      for (let k = first; k <= last; k++) out.push([(k + 1) * stepMs, points.get(k) ?? 0]);
      return { labels: other ? { [label]: name, [OTHER_LABEL]: "1" } : { [label]: name }, points: out };
    };
    const byVerb = [...verbs].sort((a, b) => a[0].localeCompare(b[0])).map(([verb, points]) => seriesOf("verb", verb, points));
    const byClient = [...top, ...(folded.has("other clients") ? ["other clients"] : [])].map((name) =>
      seriesOf("client", name, folded.get(name) ?? new Map(), name === "other clients"),
    );
    return { byVerb, byClient };
  }

  private async clusters(): Promise<string[]> {
    return (await this.sql().all<{ cluster: string }>("SELECT DISTINCT cluster FROM api_names ORDER BY cluster")).map((r) => r.cluster);
  }

  async answer(q: ApiCostQuery): Promise<ApiCostAnswer> {
    const range = { startMs: q.startMs, endMs: q.endMs };
    const [counts, lifetimes, noops] = [await this.counts(q, range), await this.lifetimes(q), await this.noops(q)];
    const stepMs = Math.max(60_000, stepFor(q.endMs - q.startMs));
    const chosen = (user: string, agent: string) => !q.client || q.client === (agent || user) || q.client === clientLabel(user, agent);
    const { byVerb, byClient } = await this.series(q, stepMs, chosen);
    const comparison = q.compare
      ? compareCosts(q.compare.before, q.compare.after, { before: await this.counts(q, q.compare.before), after: await this.counts(q, q.compare.after) })
      : null;
    const noopTotal = noops.size === 0 ? null : [...noops.values()].reduce((a, b) => a + b, 0);
    return {
      ...range,
      stepMs,
      clusters: await this.clusters(),
      total: figuresOf(counts, noopTotal),
      components: costRows(counts, lifetimes, noops),
      byVerb,
      byClient,
      comparison,
      notes: notesOn(counts),
    };
  }
}

/** What the counts cannot show: logs without reads, and names counted as "other" past the store's caps. */
function notesOn(counts: readonly CallCount[]): string[] {
  const notes: string[] = [];
  const figures = figuresOf(counts);
  if (figures.writes > 0 && figures.reads === 0)
    notes.push(
      "The audit logs of this range hold no reads (get, list, watch): their policy leaves them out, as AKS's kube-audit-admin category does. Only writes are counted here, so reads are not zero but unknown.",
    );
  const [otherUser, otherAgent] = JSON.parse(OTHER_CLIENT) as [string, string];
  const capped = counts.filter((c) => c.user === otherUser && c.agent === otherAgent).reduce((sum, c) => sum + c.calls, 0);
  if (capped > 0)
    notes.push(
      `${capped.toLocaleString("en-US")} calls are counted as "${OTHER_NAME} · ${OTHER_NAME}": they came from clients first seen after ${NAME_CAPS.client.toLocaleString("en-US")} others of their cluster (the store's cap on client names).`,
    );
  const otherTargets = counts.filter((c) => c.target === OTHER_NAME).reduce((sum, c) => sum + c.calls, 0);
  if (otherTargets > 0)
    notes.push(
      `${otherTargets.toLocaleString("en-US")} calls are on "${OTHER_NAME}": made on resources or paths first seen after ${NAME_CAPS.target.toLocaleString("en-US")} others of their cluster.`,
    );
  return notes;
}
