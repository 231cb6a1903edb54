/**
 * "Download snapshot" on a live page: the page's current state, with a relative range frozen to
 * absolute times, run through the same panel code and packed as a bundle.
 */
import { z } from "zod";
import { badRequest } from "../api/envelope";
import { notConfigured } from "../api/not-configured";
import { configuredApiservers, listApiservers } from "../panels/apiservers";
import { findPanel } from "../panels/catalog";
import { parsePanelParams, splitResource } from "../panels/params";
import { runPanel } from "../panels/run-panel";
import type { ServerContext } from "../server/context";
import { encodeSnapshot } from "./codec";
import { buildSnapshot } from "./export";

export interface Download {
  filename: string;
  bytes: Buffer;
}

const title = z.string().max(300).optional();

export async function exportView(ctx: ServerContext, params: Record<string, string>, signal?: AbortSignal): Promise<Download> {
  if (params.snapshot !== undefined) {
    // Re-sharing an open snapshot: the bundle as it is.
    return { filename: `churnscope-${params.snapshot}.json.gz`, bytes: ctx.snapshots.read(params.snapshot) };
  }
  const prometheus = ctx.prometheus;
  if (!prometheus) throw notConfigured();
  const req = parsePanelParams(params, Date.now(), ctx.config.limits.maxRangeMs, configuredApiservers(ctx.config.apiservers).map((a) => a.job));
  const label = title.safeParse(params.title);
  if (!label.success) throw badRequest("parameter title: at most 300 characters");
  const bounds = { startSeconds: Math.floor(req.startMs / 1000), endSeconds: Math.ceil(req.endMs / 1000) };
  const apiservers = await listApiservers(prometheus.client, ctx.config.apiservers, bounds, signal);
  const resource = params.resource || undefined;
  const snapshot = await buildSnapshot(
    {
      title: label.data ?? `Write load${req.job ? ` on ${req.job}` : ""}${resource ? `, ${resource}` : ""}`,
      source: "prometheus",
      takenAtMs: Date.now(),
      ranges: [{ startMs: req.startMs, endMs: req.endMs }],
      apiservers: apiservers.data,
      states: [{ startMs: req.startMs, endMs: req.endMs, apiserver: req.job, resource }],
      markers: [],
      objectWrites: null,
    },
    (call) => {
      const panel = findPanel(call.panel);
      if (!panel) throw new Error(`unknown panel ${call.panel}`);
      const [res, group] = splitResource(call.resource);
      return runPanel(prometheus, panel, { ...req, startMs: call.startMs, endMs: call.endMs, resource: res, group, width: 1000, requestedStepSeconds: undefined }, signal);
    },
  );
  const stamp = new Date(req.startMs).toISOString().slice(0, 16).replace(/[:T]/g, "");
  return { filename: `churnscope-write-load-${stamp}Z.json.gz`, bytes: encodeSnapshot(snapshot) };
}
