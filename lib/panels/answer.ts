/**
 * One panel request, from a snapshot when the request names one, else from Prometheus. Both paths
 * validate the same parameters, so a link behaves the same whichever source answers it.
 */
import { badRequest, notFound } from "../api/envelope";
import { notConfigured } from "../api/not-configured";
import type { ServerContext } from "../server/context";
import { snapshotPanel } from "../snapshot/lookup";
import { configuredApiservers } from "./apiservers";
import { findPanel } from "./catalog";
import { parsePanelParams, splitResource } from "./params";
import { findRebuildPanel } from "../rebuilds/catalog";
import { runRebuildPanel, type RebuildDeps } from "../rebuilds/run";
import { runPanel, type PanelDeps, type PanelResult } from "./run-panel";
import type { PanelCall } from "./write-load-requests";

export async function answerPanel(ctx: ServerContext, id: string, params: Record<string, string>, signal?: AbortSignal): Promise<PanelResult> {
  const panel = findPanel(id) ?? findRebuildPanel(id);
  if (!panel) throw notFound(`unknown panel "${id.slice(0, 80)}"`);
  const maxRangeMs = ctx.config.limits.maxRangeMs;
  if (params.snapshot !== undefined) {
    const snapshot = ctx.snapshots.get(params.snapshot);
    const req = parsePanelParams(params, Date.now(), maxRangeMs, snapshot.apiservers.map((a) => a.job));
    if ("needsResource" in panel && panel.needsResource && req.resource === undefined) throw badRequest(`panel ${panel.id} shows one resource: add the parameter resource`);
    return snapshotPanel(snapshot, { panel: panel.id, startMs: req.startMs, endMs: req.endMs, apiserver: req.job, resource: params.resource || undefined });
  }
  const req = parsePanelParams(params, Date.now(), maxRangeMs, configuredApiservers(ctx.config.apiservers).map((a) => a.job));
  if (!ctx.prometheus) throw notConfigured();
  if (!("needsResource" in panel)) return runRebuildPanel(rebuildDeps(ctx.config, ctx.prometheus), panel, req, signal);
  return runPanel(ctx.prometheus, panel, req, signal);
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
    const panel = findPanel(call.panel) ?? findRebuildPanel(call.panel);
    if (!panel) throw notFound(`unknown panel "${call.panel}"`);
    const [resource, group] = splitResource(call.resource);
    const req = { startMs: call.startMs, endMs: call.endMs, job: call.apiserver, resource, group, width: 1000 };
    return "needsResource" in panel ? runPanel(panelDeps, panel, req, signal) : runRebuildPanel(rebuild, panel, req, signal);
  };
}
