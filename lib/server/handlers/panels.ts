/**
 * One panel request, from a snapshot when the request names one, else from Prometheus. Both paths
 * validate the same parameters, so a link behaves the same whichever source answers it.
 */
import { badRequest, notFound } from "../../api/envelope";
import { PromError } from "../../promql/errors";
import { notConfigured } from "../../api/not-configured";
import type { ServerContext } from "../context";
import { snapshotPanel } from "../../snapshot/lookup";
import { configuredApiservers } from "../../panels/apiservers";
import { findPanel, type PanelDef } from "../../panels/catalog";
import { parsePanelParams, rangeParams, type PanelRequest } from "../../panels/params";
import { splitResource } from "../../panels/resource-name";
import { compareArgs, parseCompareArgs, runCompare } from "../../compare/compare";
import { findRebuildPanel, type RebuildPanelDef } from "../../rebuilds/catalog";
import { runRebuildPanel, type RebuildDeps } from "../../rebuilds/run";
import { runPanel, type PanelDeps, type PanelResult } from "../../panels/run-panel";
import { writeLoadRequests, type PanelCall } from "../../panels/write-load-requests";
import { DEFAULT_FROM, DEFAULT_TO } from "../../time/range";

/** A panel of any page, told apart by what runs it. */
type AnyPanel = { page: "write-load"; def: PanelDef } | { page: "rebuilds"; def: RebuildPanelDef } | { page: "compare" };

function resolvePanel(id: string): AnyPanel {
  if (id === "compare") return { page: "compare" };
  const writeLoad = findPanel(id);
  if (writeLoad) return { page: "write-load", def: writeLoad };
  const rebuild = findRebuildPanel(id);
  if (rebuild) return { page: "rebuilds", def: rebuild };
  throw notFound(`unknown panel "${id.slice(0, 80)}"`);
}

function runAny(panel: AnyPanel, panelDeps: PanelDeps, rebuild: RebuildDeps, req: PanelRequest, args: Record<string, string> | undefined, signal?: AbortSignal): Promise<PanelResult> {
  if (panel.page === "compare") return runCompare(panelDeps.client, { startMs: req.startMs, endMs: req.endMs, ...parseCompareArgs(args ?? {}) }, signal);
  return panel.page === "write-load" ? runPanel(panelDeps, panel.def, req, signal) : runRebuildPanel(rebuild, panel.def, req, signal);
}

export async function answerPanel(ctx: ServerContext, id: string, params: Record<string, string>, signal?: AbortSignal): Promise<PanelResult> {
  const panel = resolvePanel(id);
  const maxRangeMs = ctx.config.limits.maxRangeMs;
  if (panel.page === "compare") return answerCompare(ctx, params, signal);
  if (params.snapshot !== undefined) {
    const snapshot = await ctx.snapshots.open(params.snapshot);
    const req = parsePanelParams(params, Date.now(), maxRangeMs, snapshot.apiservers.map((a) => a.job));
    if (panel.page === "write-load" && panel.def.needsResource && req.resource === undefined) throw badRequest(`panel ${id} shows one resource: add the parameter resource`);
    // Keyed as the page asks (writeLoadRequests): a panel that does not show one resource is held without it, and a
    // resource in the link is ignored there, as it is when Prometheus answers.
    const call = { panel: id, startMs: req.startMs, endMs: req.endMs, apiserver: req.job };
    const resource = params.resource || undefined;
    const scoped = Object.values(writeLoadRequests({ ...call, resource })).some((c) => c?.panel === id && c.resource !== undefined);
    return snapshotPanel(snapshot, { ...call, resource: scoped ? resource : undefined });
  }
  const req = parsePanelParams(params, Date.now(), maxRangeMs, configuredApiservers(ctx.config.apiservers).map((a) => a.job));
  if (!ctx.prometheus) throw notConfigured();
  const prometheus = ctx.prometheus;
  return withinDeadline(ctx, signal, (s) => runAny(panel, prometheus, rebuildDeps(ctx.config, prometheus), req, undefined, s));
}

/**
 * Runs a panel's calls to Prometheus within prometheus.timeoutSeconds of its request's arrival, however
 * long they wait for a query slot or one another; the browser going away still cancels it.
 */
async function withinDeadline<T>(ctx: ServerContext, signal: AbortSignal | undefined, run: (signal: AbortSignal) => Promise<T>): Promise<T> {
  const timeoutMs = ctx.config.prometheus?.timeoutMs ?? 30_000;
  const deadline = AbortSignal.timeout(timeoutMs);
  try {
    return await run(signal ? AbortSignal.any([signal, deadline]) : deadline);
  } catch (error) {
    const timedOut = (deadline.aborted && !signal?.aborted) || (error instanceof Error && error.name === "TimeoutError");
    if (timedOut) throw new PromError("timeout", `Prometheus did not answer within ${timeoutMs / 1000} s`);
    throw error;
  }
}

/** The compare view's request: a range and two typed counters, from a snapshot or Prometheus. */
async function answerCompare(ctx: ServerContext, params: Record<string, string>, signal?: AbortSignal): Promise<PanelResult> {
  const { startMs, endMs } = rangeParams(params.from || DEFAULT_FROM, params.to || DEFAULT_TO, Date.now(), ctx.config.limits.maxRangeMs);
  const args = parseCompareArgs(params);
  if (params.snapshot !== undefined) return snapshotPanel(await ctx.snapshots.open(params.snapshot), { panel: "compare", startMs, endMs, args: compareArgs(args) });
  if (!ctx.prometheus) throw notConfigured();
  const client = ctx.prometheus.client;
  return withinDeadline(ctx, signal, (s) => runCompare(client, { startMs, endMs, ...args }, s));
}

export function rebuildDeps(config: ServerContext["config"], prometheus: NonNullable<ServerContext["prometheus"]>): RebuildDeps {
  const [resource, group] = splitResource(config.rebuilds.upstreamResource);
  return {
    client: prometheus.client,
    scrapeIntervalSeconds: prometheus.scrapeIntervalSeconds,
    detect: prometheus.detectRebuilds,
    siteLabel: config.siteLabel,
    hubJobs: config.apiservers.hub,
    upstream: { resource: resource ?? "connectors", group },
  };
}

/** Runs one panel call (either page's panels) the way the live page would, for snapshot exports. */
export function callRunner(panelDeps: PanelDeps, rebuild: RebuildDeps, signal?: AbortSignal): (call: PanelCall) => Promise<PanelResult> {
  return async (call) => {
    const [resource, group] = splitResource(call.resource);
    const req = { startMs: call.startMs, endMs: call.endMs, job: call.apiserver, resource, group, width: 1000 };
    return runAny(resolvePanel(call.panel), panelDeps, rebuild, req, call.args, signal);
  };
}
