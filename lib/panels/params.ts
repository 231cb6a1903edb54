/**
 * Query parameters of a panel request, validated. Browser values leave here only as typed values;
 * they reach PromQL through promql.ts, which escapes them.
 */
import { z } from "zod";
import { badRequest } from "../api/envelope";
import { parseDurationMs } from "../time/duration";
import { parseTimeExpr, resolveTimeExpr, DEFAULT_FROM, DEFAULT_TO } from "../time/range";
import { splitResource } from "./resource-name";

export interface PanelRequest {
  startMs: number;
  endMs: number;
  /** apiserver job; undefined = every API server */
  job?: string;
  resource?: string;
  /** undefined = any group; "" = core */
  group?: string;
  requestedStepSeconds?: number;
  /** chart width in pixels: about one point per pixel */
  width: number;
  /** count requests sent with ?dryRun too (left out unless asked) */
  includeDryRun?: boolean;
}

/** The chart width a panel is planned for when the request names none (exports, links). */
export const DEFAULT_CHART_WIDTH = 1000;

// A resource as kubectl writes it: plural, optionally followed by ".<group>" (connectors.networking.datumapis.com).
const RESOURCE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

const schema = z.object({
  from: z.string().max(64).default(DEFAULT_FROM),
  to: z.string().max(64).default(DEFAULT_TO),
  apiserver: z.string().min(1).max(253).optional(),
  resource: z.string().max(253).regex(RESOURCE, "expected a resource such as connectors or connectors.networking.datumapis.com").optional(),
  step: z.string().max(16).optional(),
  width: z.coerce.number().int("expected whole pixels").min(50).max(4000).default(DEFAULT_CHART_WIDTH),
  dryRun: z.enum(["include"], { message: 'expected "include" (dry runs are left out without it)' }).optional(),
});

export function parsePanelParams(
  params: Record<string, string | undefined>,
  nowMs: number,
  maxRangeMs: number,
  knownApiservers: readonly string[],
): PanelRequest {
  const parsed = schema.safeParse(stripEmpty(params));
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw badRequest(`parameter ${first.path.join(".") || "?"}: ${first.message}`);
  }
  const p = parsed.data;
  const { startMs, endMs } = rangeParams(p.from, p.to, nowMs, maxRangeMs);
  if (p.apiserver !== undefined && knownApiservers.length > 0 && !knownApiservers.includes(p.apiserver)) {
    throw badRequest(`parameter apiserver: "${p.apiserver.slice(0, 80)}" is not a configured API server (${knownApiservers.join(", ")})`);
  }
  let requestedStepSeconds: number | undefined;
  if (p.step !== undefined) {
    const ms = /^\d+(\.\d+)?$/.test(p.step) ? Number(p.step) * 1000 : parseDurationMs(p.step);
    if (ms === null || ms < 1000) throw badRequest("parameter step: expected a duration of at least 1s, such as 30s or 5m, or seconds");
    // A step longer than the range has nothing to show; Prometheus would refuse the rate windows it makes.
    if (ms > endMs - startMs) throw badRequest(`parameter step: at most the range (${Math.round((endMs - startMs) / 1000)} s)`);
    requestedStepSeconds = ms / 1000;
  }
  const [resource, group] = splitResource(p.resource);
  return { startMs, endMs, job: p.apiserver, resource, group, requestedStepSeconds, width: p.width, ...(p.dryRun ? { includeDryRun: true } : {}) };
}

/** from/to as the URL gives them → an absolute range, or a 400 that says which one is wrong and why. */
export function rangeParams(fromText: string, toText: string, nowMs: number, maxRangeMs: number): { startMs: number; endMs: number } {
  const from = parseTimeExpr(fromText);
  if (!from.ok) throw badRequest(`parameter from: ${from.error}`);
  const to = parseTimeExpr(toText);
  if (!to.ok) throw badRequest(`parameter to: ${to.error}`);
  const startMs = resolveTimeExpr(from.value, nowMs);
  const endMs = resolveTimeExpr(to.value, nowMs);
  if (endMs <= startMs) throw badRequest("the range is empty: `to` must be later than `from`");
  if (endMs - startMs > maxRangeMs) {
    throw badRequest(`the range is ${Math.round((endMs - startMs) / 86_400_000)} days; at most ${Math.round(maxRangeMs / 86_400_000)} days are allowed`);
  }
  return { startMs, endMs };
}

function stripEmpty(params: Record<string, string | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== "") out[key] = value;
  return out;
}
