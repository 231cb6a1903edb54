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
import { parsePanelParams } from "./params";
import { runPanel, type PanelResult } from "./run-panel";

export async function answerPanel(ctx: ServerContext, id: string, params: Record<string, string>, signal?: AbortSignal): Promise<PanelResult> {
  const panel = findPanel(id);
  if (!panel) throw notFound(`unknown panel "${id.slice(0, 80)}"`);
  const maxRangeMs = ctx.config.limits.maxRangeMs;
  if (params.snapshot !== undefined) {
    const snapshot = ctx.snapshots.get(params.snapshot);
    const req = parsePanelParams(params, Date.now(), maxRangeMs, snapshot.apiservers.map((a) => a.job));
    if (panel.needsResource && req.resource === undefined) throw badRequest(`panel ${panel.id} shows one resource: add the parameter resource`);
    return snapshotPanel(snapshot, { panel: panel.id, startMs: req.startMs, endMs: req.endMs, apiserver: req.job, resource: params.resource || undefined });
  }
  const req = parsePanelParams(params, Date.now(), maxRangeMs, configuredApiservers(ctx.config.apiservers).map((a) => a.job));
  if (!ctx.prometheus) throw notConfigured();
  return runPanel(ctx.prometheus, panel, req, signal);
}
