/**
 * "Download snapshot" on a live page: the page's current state, with a relative range frozen to
 * absolute times, run through the same panel code and packed as a bundle.
 */
import { z } from "zod";
import { badRequest } from "../../api/envelope";
import { notConfigured } from "../../api/not-configured";
import { configuredApiservers, listApiservers } from "../../panels/apiservers";
import { parsePanelParams } from "../../panels/params";
import { callRunner, rebuildDeps } from "./panels";
import { CLIENT_PANELS } from "../../panels/client-panels";
import { distinctCalls } from "../../panels/write-load-requests";
import { rebuildCalls } from "../../rebuilds/requests";
import type { ServerContext } from "../context";
import { encodeSnapshot } from "../../snapshot/format/codec";
import { ApiFailure } from "../../api/envelope";
import { exportObjectWrites, MAX_EXPORTED_WRITES } from "../../objects/export";
import { rangeParams } from "../../panels/params";
import { collectMarkers } from "./collect-markers";
import { compareArgs, parseCompareArgs } from "../../compare/compare";
import { buildSnapshot } from "../../snapshot/export";
import { SNAPSHOT_PAGES, type Snapshot } from "../../snapshot/format/schema";
import { exportApiCalls, MAX_EXPORTED_CALL_ROWS } from "../../store/api-calls-bundle";
import { exportAuditRequests, MAX_EXPORTED_REQUESTS } from "../../store/audit-bundle";
import { noteMarker } from "../../store/notes";
import { DEFAULT_FROM, DEFAULT_TO } from "../../time/range";

export interface Download {
  filename: string;
  bytes: Buffer;
  /** a snapshot bundle (application/gzip) unless it says otherwise */
  contentType?: string;
}

const title = z.string().max(300).optional();

/**
 * The selection a download records, so that opening it returns there: the API server and resource, the rebuild split
 * and site, or the objects' cluster, group, kind and namespace.
 */
function viewOf(params: Record<string, string>): NonNullable<Snapshot["initialView"]> {
  const text = (value: string | undefined) => (value && value.length <= 253 ? value : undefined);
  const atMs = params.at !== undefined && /^\d{1,15}$/.test(params.at) ? Number(params.at) : undefined;
  const texts = Object.fromEntries(SELECTION.map((key) => [key, text(params[key])]));
  const page = SNAPSHOT_PAGES.find((p) => p === params.page);
  return Object.fromEntries(Object.entries({ ...texts, atMs, page }).filter(([, v]) => v !== undefined));
}

const SELECTION = ["apiserver", "resource", "site", "cluster", "group", "kind", "namespace"] as const;

/** Every marker the page shows, notes and PromQL-found ones included; ids stay on this server, and the onset is found again. */
async function exportedMarkers(ctx: ServerContext, range: { startMs: number; endMs: number }, signal?: AbortSignal): Promise<Snapshot["markers"]> {
  return (await collectMarkers(ctx, range, signal)).markers.flatMap(({ id: _id, kind, ...m }) => (kind === "onset" ? [] : [{ ...m, kind }]));
}

export async function exportView(ctx: ServerContext, params: Record<string, string>, signal?: AbortSignal): Promise<Download> {
  if (params.snapshot !== undefined) {
    // Re-sharing an open snapshot: the bundle, with the notes added to it here and the view it is downloaded from.
    const held = await ctx.snapshots.open(params.snapshot);
    const notes = (await ctx.notesStore.get().between(Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, { snapshot: params.snapshot }))
      .map(noteMarker)
      .map(({ timeMs, label, detail }) => ({ timeMs, label, detail, kind: "note" as const }));
    const range = rangeParams(params.from || DEFAULT_FROM, params.to || DEFAULT_TO, Date.now(), ctx.config.limits.maxRangeMs);
    const bytes = await ctx.snapshots.reshared(params.snapshot, { markers: notes, initialView: { ...held.initialView, ...viewOf(params), range } });
    return { filename: `churnscope-${params.snapshot}.json.gz`, bytes };
  }
  if (params.view === "objects") return exportObjects(ctx, params, signal);
  const prometheus = ctx.prometheus;
  if (!prometheus) throw notConfigured();
  const req = parsePanelParams(
    params,
    Date.now(),
    ctx.config.limits.maxRangeMs,
    configuredApiservers(ctx.config.apiservers).map((a) => a.job),
  );
  const label = title.safeParse(params.title);
  if (!label.success) throw badRequest("parameter title: at most 300 characters");
  const bounds = { startSeconds: Math.floor(req.startMs / 1000), endSeconds: Math.ceil(req.endMs / 1000) };
  const apiservers = await listApiservers(prometheus.client, ctx.config.apiservers, bounds, signal);
  const resource = params.resource || undefined;
  const view = params.view === "rebuilds" || params.view === "compare" ? params.view : "write-load";
  const atMs = params.at !== undefined && /^\d{1,15}$/.test(params.at) ? Number(params.at) : undefined;
  const snapshot = await buildSnapshot(
    {
      title:
        label.data ??
        (view === "rebuilds"
          ? "Edge rebuilds"
          : view === "compare"
            ? "Compare counters"
            : `Write load${req.job ? ` on ${req.job}` : ""}${resource ? `, ${resource}` : ""}`),
      source: "prometheus",
      takenAtMs: Date.now(),
      ranges: [{ startMs: req.startMs, endMs: req.endMs }],
      initialView: { ...viewOf(params), range: { startMs: req.startMs, endMs: req.endMs } },
      apiservers: apiservers.data,
      views: [view],
      siteLabel: ctx.config.siteLabel,
      calls:
        view === "rebuilds"
          ? rebuildCalls({ startMs: req.startMs, endMs: req.endMs, atMs })
          : view === "compare"
            ? [{ panel: "compare", startMs: req.startMs, endMs: req.endMs, args: compareArgs(parseCompareArgs(params)) }]
            : distinctCalls([{ startMs: req.startMs, endMs: req.endMs, apiserver: req.job, resource }]),
      markers: await exportedMarkers(ctx, { startMs: req.startMs, endMs: req.endMs }, signal),
      objectWrites: null,
    },
    callRunner(prometheus, rebuildDeps(ctx.config, prometheus), signal),
  );
  const stamp = new Date(req.startMs).toISOString().slice(0, 16).replace(/[:T]/g, "");
  return { filename: `churnscope-${view}-${stamp}Z.json.gz`, bytes: encodeSnapshot(snapshot) };
}

/** The Objects, Field churn, timeline and Clients views: the recorder's writes in the range, every version rebuildable, and the audit requests. */
async function exportObjects(ctx: ServerContext, params: Record<string, string>, signal?: AbortSignal): Promise<Download> {
  const { startMs, endMs } = rangeParams(params.from || DEFAULT_FROM, params.to || DEFAULT_TO, Date.now(), ctx.config.limits.maxRangeMs);
  const store = ctx.stores.liveStore();
  const { writes, leftOut } = await exportObjectWrites(store, { startMs, endMs });
  if (!writes)
    throw new ApiFailure(413, "too_large", `the range holds more than ${MAX_EXPORTED_WRITES.toLocaleString("en-US")} object writes: export a shorter range`);
  const audit = await exportAuditRequests(store.audit(), { startMs, endMs });
  const calls = await exportApiCalls(store, { startMs, endMs });
  const leftOutNotes = [
    leftOut ? `${leftOut} objects written in this range were left out: their first version was recorded before Churnscope kept whole versions.` : "",
    audit ? "" : `The range holds more than ${MAX_EXPORTED_REQUESTS.toLocaleString("en-US")} audit requests: they were left out, and Clients shows none.`,
    calls ? "" : `The range holds more than ${MAX_EXPORTED_CALL_ROWS.toLocaleString("en-US")} counted API call rows: they were left out.`,
  ].filter(Boolean);
  // From Clients, where Prometheus is read: the components' own counts and API Priority and Fairness, for the range.
  const prometheus = params.page === "/clients" ? ctx.prometheus : null;
  const snapshot = await buildSnapshot(
    {
      title: params.page === "/clients" ? "Clients" : "Objects",
      ...(leftOutNotes.length ? { description: leftOutNotes.join(" ") } : {}),
      source: "recorder",
      takenAtMs: Date.now(),
      ranges: [{ startMs, endMs }],
      initialView: { ...viewOf(params), range: { startMs, endMs } },
      apiservers: [],
      views: ["objects"],
      calls: prometheus ? CLIENT_PANELS.map((p) => ({ panel: p.id, startMs, endMs })) : [],
      markers: await exportedMarkers(ctx, { startMs, endMs }, signal),
      objectWrites: writes,
      ...(audit && audit.requests.length > 0 ? { auditRequests: audit } : {}),
      ...(calls && calls.rows.length > 0 ? { apiCalls: calls } : {}),
    },
    prometheus ? callRunner(prometheus, rebuildDeps(ctx.config, prometheus), signal) : () => Promise.reject(new Error("an objects snapshot runs no panels")),
  );
  const stamp = new Date(startMs).toISOString().slice(0, 16).replace(/[:T]/g, "");
  return { filename: `churnscope-objects-${stamp}Z.json.gz`, bytes: encodeSnapshot(snapshot) };
}
