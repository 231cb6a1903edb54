/**
 * The API cost view: every API request counted per client from the audit logs (reads and watches too), of the live
 * store or of a snapshot, and two windows side by side: either side of a chosen time (the onset, a rollout), or any two.
 */
import { z } from "zod";
import { badRequest } from "../../api/envelope";
import { rangeParams } from "../../panels/params";
import { DEFAULT_FROM, DEFAULT_TO } from "../../time/range";
import type { ApiCostAnswer, CostWindow } from "../../wire/api-cost";
import type { ServerContext } from "../context";
import { queryParams } from "./query-params";

const MINUTE_MS = 60_000;
const epochMs = z.coerce.number().int().min(0).max(8_640_000_000_000_000);

const schema = z.object({
  from: z.string().max(64).default(DEFAULT_FROM),
  to: z.string().max(64).default(DEFAULT_TO),
  cluster: z.string().max(253).optional(),
  /** resource or resource.group, e.g. httproutes.gateway.networking.k8s.io */
  resource: z.string().max(253).optional(),
  /** a component (user agent name, or user) or a client (user · agent): the calls by verb are of it */
  client: z.string().max(600).optional(),
  /** the before/after split, epoch ms: equal windows either side, as long as the range allows */
  at: epochMs.optional(),
  /** or any two windows, epoch ms */
  beforeFrom: epochMs.optional(),
  beforeTo: epochMs.optional(),
  afterFrom: epochMs.optional(),
  afterTo: epochMs.optional(),
  snapshot: z.string().max(64).optional(),
});

/** The windows compared: either side of `at` (whole minutes, as long as the shorter side of the range allows), or the two given. */
function windowsOf(p: z.infer<typeof schema>, startMs: number, endMs: number): { before: CostWindow; after: CostWindow } | undefined {
  const given = [p.beforeFrom, p.beforeTo, p.afterFrom, p.afterTo];
  if (given.some((v) => v !== undefined)) {
    if (given.some((v) => v === undefined))
      throw badRequest("parameters beforeFrom, beforeTo, afterFrom and afterTo go together: two windows, each from and to");
    const before = { startMs: p.beforeFrom!, endMs: p.beforeTo! };
    const after = { startMs: p.afterFrom!, endMs: p.afterTo! };
    for (const [name, w] of [
      ["before", before],
      ["after", after],
    ] as const)
      if (w.endMs <= w.startMs) throw badRequest(`parameters ${name}From and ${name}To: the window is empty`);
    return { before, after };
  }
  if (p.at === undefined) return undefined;
  if (p.at <= startMs || p.at >= endMs) throw badRequest("parameter at: the before/after time must lie inside the range");
  const fits = Math.min(p.at - startMs, endMs - p.at);
  const windowMs = fits >= MINUTE_MS ? Math.floor(fits / MINUTE_MS) * MINUTE_MS : fits;
  return { before: { startMs: p.at - windowMs, endMs: p.at }, after: { startMs: p.at, endMs: p.at + windowMs } };
}

export async function apiCostAnswer(ctx: ServerContext, params: Record<string, string>): Promise<{ data: ApiCostAnswer; infos: string[] }> {
  const p = queryParams(schema, params);
  const { startMs, endMs } = rangeParams(p.from, p.to, Date.now(), ctx.config.limits.maxRangeMs);
  const compare = windowsOf(p, startMs, endMs);
  const store = p.snapshot === undefined ? ctx.stores.liveStore() : await ctx.stores.snapshotStore(p.snapshot, "api calls");
  const data = await store.apiCost().answer({ startMs, endMs, cluster: p.cluster, resource: p.resource, client: p.client, compare });
  return { data, infos: [] };
}
