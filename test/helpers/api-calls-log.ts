/**
 * Audit logs of every kind of API call, reads and watches included, written as kube-apiserver writes them, with
 * their ground truth counted as they are written: the generator picks each call's shape (where a list is served
 * from, its page, its selectors, its answer) and writes the request URI that asks for it, so the truth is what was
 * chosen, never what a parser reads back.
 */
import { createRng } from "@/lib/scenario/rng";
import { auditEvent, type EventSpec } from "./audit-log";

export interface LogClient {
  user: string;
  /** the user agent's name and version, apart */
  agent: string;
  version: string;
}

export type ListChoice = "cache" | "consistent" | "exact" | "continue";

/** One call as chosen: what the truth counts it as. */
export interface ChosenCall {
  minuteMs: number;
  client: LogClient;
  verb: string;
  /** resource[.group][/subresource], or a path */
  target: string;
  namespaced: boolean;
  /** the HTTP code answered */
  code: number;
  listFrom: ListChoice | "";
  paginated: boolean;
  selectors: number;
}

export interface ChosenWatch {
  auditID: string;
  client: LogClient;
  target: string;
  namespaced: boolean;
  startMs: number;
  endMs: number;
}

/** A code's class as the page counts it, written out here on its own. */
export function classOf(code: number): string {
  if (code === 429) return "429";
  if (code >= 200 && code < 300) return "2xx";
  if (code >= 300 && code < 400) return "3xx";
  if (code >= 400 && code < 500) return "4xx";
  return code >= 500 ? "5xx" : "none";
}

/** The key a call is counted under, from the truth's own fields. */
export const truthKey = (c: {
  minuteMs: number;
  user: string;
  agent: string;
  version: string;
  verb: string;
  target: string;
  namespaced: boolean;
  code: string;
  listFrom: string;
  paginated: boolean;
  selectors: number;
}) => [c.minuteMs, c.user, c.agent, c.version, c.verb, c.target, c.namespaced, c.code, c.listFrom, c.paginated, c.selectors].join("|");

export const chosenKey = (c: ChosenCall) => truthKey({ ...c, user: c.client.user, agent: c.client.agent, version: c.client.version, code: classOf(c.code) });

const KINDS = [
  { group: "net.unbounded-cloud.io", resource: "gatewaypools", namespaced: false },
  { group: "net.unbounded-cloud.io", resource: "sites", namespaced: false },
  { group: "", resource: "nodes", namespaced: false },
  { group: "coordination.k8s.io", resource: "leases", namespaced: true },
];

const targetName = (k: (typeof KINDS)[number]) => (k.group ? `${k.resource}.${k.group}` : k.resource);

function uriOf(k: (typeof KINDS)[number], verb: string, name: string | undefined, query: string): string {
  const base = `/api${k.group ? `s/${k.group}/v1alpha1` : "/v1"}${k.namespaced ? "/namespaces/kube-node-lease" : ""}/${k.resource}${name ? `/${name}` : ""}`;
  return `${base}${query ? `?${query}` : verb === "watch" ? "?watch=true" : ""}`;
}

/** A list's query as a client-go reflector or a pager asks it, for the chosen shape. */
function listQuery(from: ListChoice, paginated: boolean, selectors: number): string {
  const q: string[] = [];
  if (from === "cache") q.push("resourceVersion=0");
  if (from === "exact") q.push("resourceVersion=1234", "resourceVersionMatch=Exact");
  if (from === "continue") q.push("continue=eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTIzfQ%3D%3D");
  if (paginated || from === "continue") q.push("limit=500");
  if (selectors & 1) q.push("labelSelector=app%3Dagent");
  if (selectors & 2) q.push("fieldSelector=metadata.name%3Dnode-1");
  return q.join("&");
}

export interface CallsLog {
  lines: string[];
  calls: ChosenCall[];
  watches: ChosenWatch[];
  /** write requests stored one by one (Metadata level) */
  writes: ChosenCall[];
}

/**
 * `minutes` of calls by `clients`, each minute a few gets, lists of every shape, watches (each started here and
 * ended a few minutes later, its two stages logged), non-resource requests, a write, a rejected (429) list and a dry
 * run. Lines are written in the order the API server writes stages (by their time).
 */
export function callsLog(startMs: number, minutes: number, clients: LogClient[], seed = 7): CallsLog {
  const rng = createRng(seed);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rng() * xs.length)];
  const events: { atMs: number; line: string }[] = [];
  const calls: ChosenCall[] = [];
  const watches: ChosenWatch[] = [];
  const writes: ChosenCall[] = [];
  let serial = 0;
  const emit = (spec: EventSpec, uri: string, atMs: number) => {
    const event = auditEvent({ ...spec, level: "Metadata" });
    event.requestURI = uri;
    events.push({ atMs, line: JSON.stringify(event) });
  };
  for (let m = 0; m < minutes; m++) {
    const minuteMs = startMs + m * 60_000;
    for (const client of clients) {
      const userAgent = client.version ? `${client.agent}/${client.version} (linux/amd64) kubernetes/abcdef0` : client.agent;
      const at = () => minuteMs + Math.floor(rng() * 59_000);
      const base = (verb: string, k: (typeof KINDS)[number], receivedMs: number) => ({
        verb,
        user: client.user,
        userAgent,
        resource: k.resource,
        group: k.group || undefined,
        version: k.group ? "v1alpha1" : "v1",
        namespace: k.namespaced ? "kube-node-lease" : undefined,
        receivedMs,
        auditID: `call-${seed}-${serial++}`,
      });
      for (let i = 0; i < 1 + Math.floor(rng() * 3); i++) {
        const k = pick(KINDS);
        const name = `obj-${Math.floor(rng() * 5)}`;
        const code = rng() < 0.1 ? 404 : 200;
        const receivedMs = at();
        emit({ ...base("get", k, receivedMs), name, code }, uriOf(k, "get", name, ""), receivedMs + 5);
        calls.push({ minuteMs, client, verb: "get", target: targetName(k), namespaced: k.namespaced, code, listFrom: "", paginated: false, selectors: 0 });
      }
      for (let i = 0; i < Math.floor(rng() * 3); i++) {
        const k = pick(KINDS);
        const from = pick(["cache", "consistent", "exact", "continue"] as const);
        const paginated = from === "continue" || rng() < 0.5;
        const selectors = Math.floor(rng() * 4);
        const code = rng() < 0.1 ? 429 : 200;
        const receivedMs = at();
        emit({ ...base("list", k, receivedMs), code }, uriOf(k, "list", undefined, listQuery(from, paginated, selectors)), receivedMs + 5);
        calls.push({ minuteMs, client, verb: "list", target: targetName(k), namespaced: k.namespaced, code, listFrom: from, paginated, selectors });
      }
      if (rng() < 0.3) {
        const k = pick(KINDS);
        const startedMs = at();
        const lifetimeMs = 60_000 + Math.floor(rng() * 240_000);
        const auditID = `watch-${seed}-${serial++}`;
        const spec = { ...base("watch", k, startedMs), auditID };
        const uri = uriOf(k, "watch", undefined, "allowWatchBookmarks=true&resourceVersion=4321&watch=true&timeoutSeconds=300");
        const started = auditEvent({ ...spec, level: "Metadata", stage: "ResponseStarted", latencyMs: 2 });
        started.requestURI = uri;
        started.userAgent = userAgent;
        events.push({ atMs: startedMs + 2, line: JSON.stringify(started) });
        const ended = auditEvent({ ...spec, level: "Metadata", latencyMs: lifetimeMs });
        ended.requestURI = uri;
        ended.userAgent = userAgent;
        events.push({ atMs: startedMs + lifetimeMs, line: JSON.stringify(ended) });
        watches.push({ auditID, client, target: targetName(k), namespaced: k.namespaced, startMs: startedMs, endMs: startedMs + lifetimeMs });
      }
      if (rng() < 0.5) {
        const path = pick(["/healthz", "/livez", "/apis", "/openapi/v3", "/version"]);
        const receivedMs = at();
        const event = auditEvent({ ...base("get", KINDS[0], receivedMs) });
        delete event.objectRef;
        event.requestURI = `${path}?timeout=32s`;
        event.userAgent = userAgent;
        events.push({ atMs: receivedMs + 5, line: JSON.stringify(event) });
        calls.push({ minuteMs, client, verb: "get", target: path, namespaced: false, code: 200, listFrom: "", paginated: false, selectors: 0 });
      }
      if (rng() < 0.4) {
        const k = KINDS[3];
        const receivedMs = at();
        const dryRun = rng() < 0.2;
        const name = `lease-${client.user.length % 7}`;
        emit({ ...base("update", k, receivedMs), name }, `${uriOf(k, "update", name, dryRun ? "dryRun=All" : "")}`, receivedMs + 5);
        const chosen: ChosenCall = {
          minuteMs,
          client,
          verb: "update",
          target: targetName(k),
          namespaced: true,
          code: 200,
          listFrom: "",
          paginated: false,
          selectors: 0,
        };
        calls.push(chosen);
        if (!dryRun) writes.push(chosen);
      }
    }
  }
  events.sort((a, b) => a.atMs - b.atMs);
  return { lines: events.map((e) => e.line), calls, watches, writes };
}

/** The truth's counts by key: every chosen call, and each watch's start in the minute it was received. */
export function truthCounts(log: CallsLog): Map<string, number> {
  const out = new Map<string, number>();
  const add = (key: string) => out.set(key, (out.get(key) ?? 0) + 1);
  for (const c of log.calls) add(chosenKey(c));
  for (const w of log.watches)
    add(
      chosenKey({
        minuteMs: Math.floor(w.startMs / 60_000) * 60_000,
        client: w.client,
        verb: "watch",
        target: w.target,
        namespaced: w.namespaced,
        code: 200,
        listFrom: "",
        paginated: false,
        selectors: 0,
      }),
    );
  return out;
}

/** The exact median of some numbers. */
export function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid] : (sorted[mid - 1] + sorted[mid]) / 2;
}
