/**
 * The API server's own record of every call, read straight from its audit log file, independently of the ingester:
 * each request once (a watch at its ResponseStarted stage, anything else at ResponseComplete), by its user agent's name
 * and version, verb, resource, the list parameters its URI carries and its answer, in the minute it was received.
 */
import { readFileSync } from "node:fs";

export interface TruthCall {
  receivedMs: number;
  minuteMs: number;
  user: string;
  agent: string;
  version: string;
  verb: string;
  /** resource[.group] */
  resource: string;
  code: number;
  /** lists: whether the URI asked for a resourceVersion (the watch cache) */
  listFromCache: boolean;
  auditID: string;
}

export function truthCalls(auditLogPath: string, keep: (userAgent: string) => boolean): TruthCall[] {
  const out: TruthCall[] = [];
  for (const line of readFileSync(auditLogPath, "utf8").split("\n")) {
    if (line === "") continue;
    const e = JSON.parse(line) as {
      stage: string;
      verb: string;
      auditID: string;
      userAgent?: string;
      user?: { username?: string };
      objectRef?: { resource?: string; apiGroup?: string };
      requestURI: string;
      responseStatus?: { code?: number };
      requestReceivedTimestamp: string;
    };
    const userAgent = e.userAgent ?? "";
    if (!keep(userAgent)) continue;
    const counted = e.verb === "watch" ? e.stage === "ResponseStarted" : e.stage === "ResponseComplete";
    if (!counted) continue;
    const [name, rest = ""] = userAgent.split(/\/(.*)/s);
    const query = new URLSearchParams(e.requestURI.includes("?") ? e.requestURI.slice(e.requestURI.indexOf("?") + 1) : "");
    const group = e.objectRef?.apiGroup ?? "";
    const receivedMs = Date.parse(e.requestReceivedTimestamp);
    out.push({
      receivedMs,
      minuteMs: Math.floor(receivedMs / 60_000) * 60_000,
      user: e.user?.username ?? "",
      agent: name,
      version: rest.split(" ")[0],
      verb: e.verb,
      resource: e.objectRef?.resource ? `${e.objectRef.resource}${group ? `.${group}` : ""}` : e.requestURI.split("?")[0],
      code: e.responseStatus?.code ?? 0,
      listFromCache:
        e.verb === "list" && (query.get("resourceVersion") ?? "") !== "" && query.get("resourceVersionMatch") !== "Exact" && !query.get("continue"),
      auditID: e.auditID,
    });
  }
  return out;
}

/** How many of the calls meet a condition. */
export const count = (calls: readonly TruthCall[], keep: (c: TruthCall) => boolean) => calls.filter(keep).length;
