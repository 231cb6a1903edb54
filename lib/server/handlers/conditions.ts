/**
 * What real controllers get wrong, from the writes stored: condition clocks and echoes (/api/objects/traits), and flaps
 * with a damping what-if (/api/objects/flaps), over the Objects scope and range, of the live store or a snapshot.
 */
import { z } from "zod";
import { flapsOf, holdDown } from "../../analysis/flaps";
import { MAX_FLAP_CHANGES } from "../../store/flaps-query";
import { MAX_TRAIT_GROUPS } from "../../store/traits-query";
import type { FlapsAnswer, TraitsAnswer } from "../../wire/traits";
import type { ServerContext } from "../context";
import { liveNotes, parse, storeFor } from "./objects";
import { queryParams } from "./query-params";

export async function traitsAnswer(ctx: ServerContext, params: Record<string, string>): Promise<{ data: TraitsAnswer; warnings?: string[]; infos?: string[] }> {
  const { p, filter } = parse(params, ctx.config.limits.maxRangeMs);
  const store = await storeFor(ctx, p.snapshot);
  const { answer, cut } = await store.traits(filter);
  const notes = p.snapshot === undefined ? await liveNotes(ctx, filter) : { warnings: [], infos: [] };
  return {
    data: answer,
    warnings: [
      ...notes.warnings,
      ...(cut
        ? [
            `More than ${MAX_TRAIT_GROUPS.toLocaleString("en-US")} groups of objects and writers: the counts cover part of the range. Narrow the range or the scope.`,
          ]
        : []),
    ],
    infos: notes.infos,
  };
}

const HOUR_S = 3_600;
const flapSchema = z.object({
  /** the longest time in the other state that counts as a flap, seconds */
  window: z.coerce
    .number()
    .int()
    .min(1)
    .max(24 * HOUR_S)
    .default(60),
  /** the hold-down: changes into field=value reach the consumer once they have lasted `hold` seconds */
  holdField: z.string().max(128).default("online"),
  holdValue: z.string().max(253).default("false"),
  hold: z.coerce
    .number()
    .int()
    .min(0)
    .max(24 * HOUR_S)
    .default(30),
});

export async function flapsAnswer(ctx: ServerContext, params: Record<string, string>): Promise<{ data: FlapsAnswer; warnings?: string[]; infos?: string[] }> {
  const { p, filter } = parse(params, ctx.config.limits.maxRangeMs);
  const f = queryParams(flapSchema, params);
  const store = await storeFor(ctx, p.snapshot);
  const { runs, cut } = await store.changeRuns(filter, f.window * 1000);
  const range = { startMs: filter.fromMs, endMs: filter.toMs };
  const fields = new Set<string>();
  for (const run of runs.slice(0, 1_000))
    for (const change of run.changes.slice(0, 10)) for (const key of Object.keys(JSON.parse(change.projection) as object)) fields.add(key);
  const notes = p.snapshot === undefined ? await liveNotes(ctx, filter) : { warnings: [], infos: [] };
  return {
    data: {
      ...range,
      flaps: flapsOf(runs, f.window * 1000, range),
      hold: fields.has(f.holdField) ? holdDown(runs, { field: f.holdField, value: f.holdValue, holdMs: f.hold * 1000 }, filter.toMs) : null,
      fields: [...fields].sort(),
    },
    warnings: [
      ...notes.warnings,
      ...(cut
        ? [`More than ${MAX_FLAP_CHANGES.toLocaleString("en-US")} routed changes: the figures cover the objects read first. Narrow the range or the scope.`]
        : []),
    ],
    infos: notes.infos,
  };
}
