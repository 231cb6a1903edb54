/**
 * "Grafana JSON" on Write load and Edge rebuilds: the view's panels as a Grafana dashboard, their PromQL written for
 * the Prometheus behind this dashboard (its label forms and engine, as the panels ask it) with Grafana's variables.
 */
import { z } from "zod";
import { ApiFailure } from "../../api/envelope";
import { notConfigured } from "../../api/not-configured";
import { GRAFANA_PLACEHOLDERS, grafanaDashboard, type GrafanaPanelInput } from "../../grafana/dashboard";
import { configuredApiservers } from "../../panels/apiservers";
import { findPanel } from "../../panels/catalog";
import { rangeParams } from "../../panels/params";
import { splitResource } from "../../panels/resource-name";
import { writeLoadRequests } from "../../panels/write-load-requests";
import { hasNativeHistograms } from "../../promql/flavor";
import { REBUILD_PANELS } from "../../rebuilds/catalog";
import { DEFAULT_FROM, DEFAULT_TO } from "../../time/range";
import type { ServerContext } from "../context";
import { queryParams } from "./query-params";
import type { Download } from "./export-view";
import { rebuildDeps } from "./panels";

const schema = z.object({
  view: z.enum(["write-load", "rebuilds"]),
  from: z.string().max(64).default(DEFAULT_FROM),
  to: z.string().max(64).default(DEFAULT_TO),
  apiserver: z.string().max(253).optional(),
  resource: z.string().max(253).optional(),
  /** where the browser reached Churnscope, for the links back (the server cannot know its public address) */
  base: z
    .url({ protocol: /^https?$/ })
    .max(300)
    .default("http://localhost:3000"),
});

export async function grafanaExport(ctx: ServerContext, params: Record<string, string>, signal?: AbortSignal): Promise<Download> {
  // A snapshot, the replay included, has no Prometheus behind it to write the dashboard's PromQL for: a 4xx that says
  // so and what to do, not the 503 of a server that might answer later.
  if (params.snapshot !== undefined)
    throw new ApiFailure(
      409,
      "snapshot",
      "a snapshot has no Prometheus behind it to write a Grafana dashboard for: open the live view on a dashboard with Prometheus configured, or share the snapshot itself (Download snapshot)",
    );
  const p = queryParams(schema, params);
  if (!ctx.prometheus)
    throw new ApiFailure(409, "not_configured", `a Grafana dashboard is written for this dashboard's Prometheus. ${notConfigured().message}`);
  const { startMs, endMs } = rangeParams(p.from, p.to, Date.now(), ctx.config.limits.maxRangeMs);
  const bounds = { startSeconds: Math.floor(startMs / 1000), endSeconds: Math.ceil(endMs / 1000) };
  const engine = await ctx.prometheus.engine(signal);
  const nativeHistograms = hasNativeHistograms(engine.flavor);
  const windows = engine.windows;
  const [resource, group] = splitResource(p.resource);
  const { windowSeconds, rangeSeconds } = GRAFANA_PLACEHOLDERS;
  let panels: GrafanaPanelInput[];
  if (p.view === "write-load") {
    const labelSets = await ctx.prometheus.probe(p.apiserver, bounds, signal);
    const ids = [
      ...new Set(Object.values(writeLoadRequests({ startMs, endMs, apiserver: p.apiserver, resource: p.resource })).flatMap((c) => (c ? [c.panel] : []))),
    ];
    panels = ids.flatMap((id) => {
      const panel = findPanel(id);
      if (!panel) return [];
      const vars = {
        job: p.apiserver === undefined ? undefined : GRAFANA_PLACEHOLDERS.job,
        resource: resource === undefined ? undefined : GRAFANA_PLACEHOLDERS.resource,
        group: group === undefined ? undefined : GRAFANA_PLACEHOLDERS.group,
        windowSeconds,
        rangeSeconds,
        labelSets,
        nativeHistograms,
        windows,
      };
      const { queries } = panel.queries(vars);
      return [{ title: panel.title, description: panel.description, unit: panel.unit, mode: panel.mode, stacked: panel.chart === "stacked", queries }];
    });
  } else {
    const deps = rebuildDeps(ctx.config, ctx.prometheus);
    const detected = await deps.detect(bounds, signal);
    if (!detected) throw new ApiFailure(404, "no_rebuild_metrics", "no rebuild metrics in this range, so there is no dashboard to make");
    const vars = {
      detected,
      siteLabel: deps.siteLabel,
      windowSeconds,
      rangeSeconds,
      hubJobs: deps.hubJobs,
      upstream: deps.upstream,
      nativeHistograms,
      windows,
    };
    panels = REBUILD_PANELS.map((panel) => ({
      title: panel.title,
      description: panel.description,
      unit: panel.unit,
      mode: panel.mode,
      stacked: false,
      queries: panel.queries(vars).queries,
    })).filter((panel) => panel.queries.length > 0);
  }
  const view = new URLSearchParams(Object.entries({ apiserver: p.apiserver, resource: p.resource }).filter((e): e is [string, string] => e[1] !== undefined));
  const dashboard = grafanaDashboard({
    title:
      p.view === "write-load"
        ? `Churnscope: Write load${p.apiserver ? ` on ${p.apiserver}` : ""}${p.resource ? `, ${p.resource}` : ""}`
        : "Churnscope: Edge rebuilds",
    startMs,
    endMs,
    apiservers: configuredApiservers(ctx.config.apiservers).map((a) => a.job),
    apiserver: p.apiserver,
    resource,
    group,
    viewUrl: `${p.base.replace(/\/+$/, "")}${p.view === "write-load" ? "/" : "/rebuilds"}${view.size ? `?${view}` : ""}`,
    panels,
  });
  return { filename: `churnscope-${p.view}-grafana.json`, bytes: Buffer.from(JSON.stringify(dashboard, null, 2)), contentType: "application/json" };
}
