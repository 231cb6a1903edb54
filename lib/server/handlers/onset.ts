/**
 * /api/onset: the one onset of a range (and API server), the minute every page marks and compares around. The rise
 * is found on the range's write rates, then read again at the finest step the source has around it (a snapshot's
 * shortest held range, Prometheus's scrape interval), so a wider or narrower view of the same rise names the same
 * minute. Answers null when the range shows no rise.
 */
import { z } from "zod";
import { detectOnset, roundToMinute, rateWindowOf, riseStartMs } from "../../analysis/onset";
import { DEFAULT_FROM, DEFAULT_TO } from "../../time/range";
import type { OnsetAnswer } from "../../wire/onset";
import type { ServerContext } from "../context";
import { answerPanel } from "./panels";
import { queryParams } from "./query-params";

/** The rates the onset is read from: every resource's writes, the chart Write load opens on. */
const PANEL = "writes-by-resource";

const schema = z
  .object({
    from: z.string().max(64).default(DEFAULT_FROM),
    to: z.string().max(64).default(DEFAULT_TO),
    apiserver: z.string().max(256).optional(),
    resource: z.string().max(256).optional(),
    snapshot: z.string().max(64).optional(),
  })
  .strict();

export async function answerOnset(ctx: ServerContext, params: Record<string, string>, signal?: AbortSignal): Promise<{ data: OnsetAnswer | null }> {
  const p = queryParams(schema, params);
  // A resource is drawn on its own however small (as Write load draws it), so it can be named among what rose most.
  const selection: Record<string, string> = Object.fromEntries(
    Object.entries({ apiserver: p.apiserver, resource: p.resource, snapshot: p.snapshot }).filter((e): e is [string, string] => e[1] !== undefined),
  );
  const range = (await answerPanel(ctx, PANEL, { ...selection, from: p.from, to: p.to }, signal)).data;
  const windowSeconds = rateWindowOf(range);
  const found = detectOnset(range.series, { overlap: windowSeconds / range.stepSeconds });
  if (!found) return { data: null };
  // The first point at the new level says the rise began within a step and a rate window before it: read that
  // stretch again, with as much again either side, at the finest step the source has.
  const spanMs = (range.stepSeconds + windowSeconds) * 1000;
  const began = { fromMs: found.timeMs - spanMs, toMs: found.timeMs };
  const aroundMs = { from: Math.max(range.startMs, began.fromMs - spanMs), to: Math.min(range.endMs, found.timeMs + spanMs) };
  const finestStep: Record<string, string> = ctx.prometheus && !p.snapshot ? { step: String(ctx.prometheus.scrapeIntervalSeconds) } : {};
  const around = (await answerPanel(ctx, PANEL, { ...selection, ...finestStep, from: String(aroundMs.from), to: String(aroundMs.to) }, signal)).data;
  const aroundWindow = rateWindowOf(around);
  const refined = riseStartMs({ series: around.series, stepSeconds: around.stepSeconds, windowSeconds: aroundWindow }, began.fromMs, began.toMs);
  const read = refined !== null ? { timeMs: refined, data: around, windowSeconds: aroundWindow } : undefined;
  return {
    data: {
      timeMs: read?.timeMs ?? roundToMinute(found.timeMs - (windowSeconds * 1000) / 2),
      before: found.before,
      after: found.after,
      unit: range.unit,
      stepSeconds: (read?.data ?? range).stepSeconds,
      windowSeconds: read?.windowSeconds ?? windowSeconds,
      movers: found.movers,
    },
  };
}
