/**
 * The API cost view's questions of the counted calls (api-calls.ts): every call by client in a range, over time by
 * verb and by client, each watch's median lifetime per client and kind, and two windows side by side. Counts are per
 * minute: a minute's calls count where the minute starts inside the range.
 */
import { clientLabel, compareCosts, componentOf, costRows, figuresOf, type LifetimeCount } from "../analysis/api-cost";
import { agentParts } from "../audit/calls";
import { OTHER_LABEL } from "../panels/top-n";
import type { Series } from "../promql/types";
import type { ApiCostAnswer, CallCount, CostWindow, FlowSchemaLoad, ListStorm } from "../wire/api-cost";
import { CACHE_LIST, codeSql, fromShape, listFromSql, NAME_CAPS, OTHER_CLIENT, OTHER_NAME, REJECTED_CODE } from "./api-calls";
import { stepFor } from "./clients-query";
import type { StoreConnection } from "./types";

const TOP_CLIENTS = 8;
/** A LIST storm: at least this many clients listing one kind in one minute. */
export const MIN_STORM_CLIENTS = 10;
const MAX_STORMS = 20;
const MAX_FLOW_CLIENTS = 12;
const NAMES = "JOIN api_names n ON n.id = c.client_id JOIN api_names t ON t.id = c.target_id JOIN api_names vb ON vb.id = c.verb_id";
const REJECTED = `${codeSql("c")} = ${REJECTED_CODE}`;

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
      shape: number;
      flow: string;
      calls: number;
    }>(
      `SELECT n.name AS client, v.name AS version, vb.name AS verb, t.name AS target, c.shape, f.name AS flow, SUM(c.calls) AS calls
       FROM api_calls c ${NAMES} JOIN api_names v ON v.id = c.version_id JOIN api_names f ON f.id = c.flow_id
       WHERE ${f.where}
       GROUP BY n.name, v.name, vb.name, t.name, c.shape, f.name`,
      f.params,
    );
    return rows.map(({ client, shape, flow, calls, ...r }) => {
      const [user, agent] = JSON.parse(client) as [string, string];
      const [flowSchema, priorityLevel] = flow === "" ? ["", ""] : (JSON.parse(flow) as [string, string]);
      return {
        ...r,
        user,
        agent,
        ...fromShape(Number(shape)),
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
      `SELECT c.ts_ms / ${stepMs} AS bucket, n.name AS client, vb.name AS verb, SUM(c.calls) AS calls
       FROM api_calls c ${NAMES} WHERE ${f.where}
       GROUP BY c.ts_ms / ${stepMs}, n.name, vb.name`,
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

  /** Minutes in which many clients listed one kind, with who they were. */
  private async listStorms(q: ApiCostQuery): Promise<ListStorm[]> {
    const f = this.filter(q, q);
    const minutes = await this.sql().all<{ minute: number; targetId: number; target: string; clients: number; lists: number }>(
      `SELECT c.ts_ms AS minute, c.target_id AS "targetId", t.name AS target, COUNT(DISTINCT c.client_id) AS clients, SUM(c.calls) AS lists
       FROM api_calls c ${NAMES} WHERE ${f.where} AND vb.name = 'list'
       GROUP BY c.ts_ms, c.target_id, t.name HAVING COUNT(DISTINCT c.client_id) >= ? ORDER BY clients DESC, lists DESC, minute LIMIT ${MAX_STORMS}`,
      [...f.params, MIN_STORM_CLIENTS],
    );
    const storms: ListStorm[] = [];
    for (const m of minutes) {
      const rows = await this.sql().all<{ client: string; listFrom: number; code: number; lists: number }>(
        `SELECT n.name AS client, ${listFromSql("c")} AS "listFrom", ${codeSql("c")} AS code, SUM(c.calls) AS lists FROM api_calls c ${NAMES}
         WHERE c.ts_ms = ? AND c.target_id = ? AND vb.name = 'list'${q.cluster ? " AND n.cluster = ?" : ""} GROUP BY n.name, c.shape`,
        [Number(m.minute), Number(m.targetId), ...(q.cluster ? [q.cluster] : [])],
      );
      const byComponent = new Map<string, { clients: Set<string>; lists: number }>();
      let fromCache = 0;
      let rejected = 0;
      for (const r of rows) {
        const [user, agent] = JSON.parse(r.client) as [string, string];
        const component = componentOf(user, agent);
        const entry = byComponent.get(component) ?? byComponent.set(component, { clients: new Set(), lists: 0 }).get(component)!;
        entry.clients.add(r.client);
        entry.lists += Number(r.lists);
        if (Number(r.listFrom) === CACHE_LIST) fromCache += Number(r.lists);
        if (Number(r.code) === REJECTED_CODE) rejected += Number(r.lists);
      }
      const lists = Number(m.lists);
      storms.push({
        minuteMs: Number(m.minute),
        target: m.target,
        clients: Number(m.clients),
        lists,
        fromCache,
        consistent: lists - fromCache,
        rejected,
        components: [...byComponent]
          .map(([component, e]) => ({ component, clients: e.clients.size, lists: e.lists }))
          .sort((a, b) => b.clients - a.clients || a.component.localeCompare(b.component)),
      });
    }
    return storms.sort((a, b) => a.minuteMs - b.minuteMs || a.target.localeCompare(b.target));
  }

  /** Each FlowSchema's calls and rejections, and the clients that were sending into it in the minutes it rejected. */
  private async flowSchemas(q: ApiCostQuery): Promise<FlowSchemaLoad[]> {
    const f = this.filter(q, q);
    const flows = await this.sql().all<{ flowId: number; flow: string; calls: number; rejected: number; minutes: number }>(
      `SELECT c.flow_id AS "flowId", fl.name AS flow, SUM(c.calls) AS calls, SUM(CASE WHEN ${REJECTED} THEN c.calls ELSE 0 END) AS rejected,
         COUNT(DISTINCT CASE WHEN ${REJECTED} THEN c.ts_ms END) AS minutes
       FROM api_calls c ${NAMES} JOIN api_names fl ON fl.id = c.flow_id WHERE ${f.where} AND fl.name != '' GROUP BY c.flow_id, fl.name`,
      f.params,
    );
    const out: FlowSchemaLoad[] = [];
    for (const flow of flows) {
      const rejecting = Number(flow.rejected) > 0;
      // Where it rejected, the clients sending into it in those minutes; else all its clients.
      const when = rejecting
        ? ` AND EXISTS (SELECT 1 FROM api_calls r WHERE r.flow_id = c.flow_id AND r.ts_ms = c.ts_ms AND ${codeSql("r")} = ${REJECTED_CODE} AND r.calls > 0)`
        : "";
      const clients = await this.sql().all<{ client: string; calls: number; rejected: number }>(
        `SELECT n.name AS client, SUM(c.calls) AS calls, SUM(CASE WHEN ${REJECTED} THEN c.calls ELSE 0 END) AS rejected
         FROM api_calls c ${NAMES} WHERE ${f.where} AND c.flow_id = ?${when} GROUP BY n.name`,
        [...f.params, Number(flow.flowId)],
      );
      const [flowSchema, priorityLevel] = JSON.parse(flow.flow) as [string, string];
      out.push({
        flowSchema,
        priorityLevel,
        calls: Number(flow.calls),
        rejected: Number(flow.rejected),
        rejectingMinutes: Number(flow.minutes),
        clients: clients
          .map((c) => {
            const [user, agent] = JSON.parse(c.client) as [string, string];
            return { client: clientLabel(user, agent), component: componentOf(user, agent), calls: Number(c.calls), rejected: Number(c.rejected) };
          })
          .sort((a, b) => b.rejected - a.rejected || b.calls - a.calls || a.client.localeCompare(b.client))
          .slice(0, MAX_FLOW_CLIENTS),
      });
    }
    return out.sort((a, b) => b.rejected - a.rejected || b.calls - a.calls || a.flowSchema.localeCompare(b.flowSchema));
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
      listStorms: await this.listStorms(q),
      minStormClients: MIN_STORM_CLIENTS,
      flowSchemas: await this.flowSchemas(q),
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
  if (counts.length > 0 && counts.every((c) => c.flowSchema === ""))
    notes.push(
      "No FlowSchema was recorded for these clusters, so calls are not shown by flow schema: Churnscope reads FlowSchemas with list and watch where it records a cluster (the flowschema profile).",
    );
  if (otherTargets > 0)
    notes.push(
      `${otherTargets.toLocaleString("en-US")} calls are on "${OTHER_NAME}": made on resources or paths first seen after ${NAME_CAPS.target.toLocaleString("en-US")} others of their cluster.`,
    );
  return notes;
}
