/** Runs one catalog panel against Prometheus and returns it in domain shape for the JSON API. */
import type { PromClient } from "../prometheus/client";
import { toSeries } from "../prometheus/to-series";
import type { Series } from "../prometheus/types";
import { alignToStep, chooseStepSeconds, rateWindowSeconds } from "../time/step";
import { badRequest } from "../api/envelope";
import type { PanelDef, Unit } from "./catalog";
import type { PanelRequest } from "./params";
import { probeLabelSets, type LabelSets } from "./probe";
import { topNWithOther } from "./top-n";

export interface PanelData {
  panel: string;
  title: string;
  unit: Unit;
  /** The PromQL sent (the first query when a panel sends several; all are in `queries`). */
  query: string;
  queries: { name?: string; promql: string }[];
  stepSeconds: number;
  startMs: number;
  endMs: number;
  series: Series[];
  estimate?: string;
}

export interface PanelResult {
  data: PanelData;
  warnings: string[];
  infos: string[];
}

export interface PanelDeps {
  client: PromClient;
  scrapeIntervalSeconds: number;
  /** Label-set probe, injectable so callers can cache it. */
  probe?: (job: string | undefined, bounds: { startSeconds: number; endSeconds: number }, signal?: AbortSignal) => Promise<LabelSets>;
}

export async function runPanel(deps: PanelDeps, panel: PanelDef, req: PanelRequest, signal?: AbortSignal): Promise<PanelResult> {
  if (panel.needsResource && req.resource === undefined) {
    throw badRequest(`panel ${panel.id} shows one resource: add the parameter resource, e.g. resource=connectors`);
  }
  const stepSeconds =
    panel.mode === "total"
      ? Math.max(1, Math.round((req.endMs - req.startMs) / 1000))
      : chooseStepSeconds({
          startMs: req.startMs,
          endMs: req.endMs,
          minStepSeconds: deps.scrapeIntervalSeconds,
          maxPoints: req.width,
          requestedStepSeconds: req.requestedStepSeconds,
        });
  const aligned = alignToStep(req.startMs, req.endMs, stepSeconds);
  const bounds = { startSeconds: aligned.startSeconds, endSeconds: aligned.endSeconds };
  const probe = deps.probe ?? ((job, b, s) => probeLabelSets(deps.client, job, b, s));
  const labelSets = await probe(req.job, bounds, signal);
  const { queries, infos } = panel.queries({
    job: req.job,
    resource: req.resource,
    group: req.group,
    windowSeconds: rateWindowSeconds(stepSeconds, deps.scrapeIntervalSeconds),
    // Totals cover exactly [from, to]: the instant query runs at `to` over the whole length.
    rangeSeconds: stepSeconds,
    labelSets,
  });

  const results = await Promise.all(
    queries.map((q) =>
      panel.mode === "total" ? deps.client.query(q.promql, req.endMs / 1000, signal) : deps.client.queryRange(q.promql, aligned, signal),
    ),
  );
  const warnings: string[] = [];
  const allInfos = [...infos];
  let series: Series[] = [];
  results.forEach((result, i) => {
    warnings.push(...result.warnings);
    allInfos.push(...result.infos);
    const name = queries[i].name;
    for (const s of toSeries(result.data)) series.push(name ? { ...s, labels: { series: name, ...s.labels } } : s);
  });
  if (panel.topN !== undefined) series = topNWithOther(series, panel.topN);

  return {
    data: {
      panel: panel.id,
      title: panel.title,
      unit: panel.unit,
      query: queries[0].promql,
      queries,
      stepSeconds,
      startMs: panel.mode === "total" ? req.startMs : aligned.startSeconds * 1000,
      endMs: panel.mode === "total" ? req.endMs : aligned.endSeconds * 1000,
      series,
      ...(panel.estimate ? { estimate: panel.estimate } : {}),
    },
    warnings: unique(warnings),
    infos: unique(allInfos),
  };
}

function unique(values: string[]): string[] {
  return [...new Set(values)];
}
