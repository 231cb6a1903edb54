/**
 * Time ranges as they live in URLs. Each end is either absolute (epoch ms) or relative to now
 * ("now", "now-6h"), so a link can say "the last 6 hours" or freeze an exact window. The accepted
 * forms match Grafana's `from`/`to` so alert templates written for Grafana can link here.
 */
import { formatDurationMs, parseDurationMs } from "./duration";

export type TimeExpr = { kind: "absolute"; ms: number } | { kind: "relative"; agoMs: number };

export interface TimeRangeInput {
  from: TimeExpr;
  to: TimeExpr;
}

export interface AbsoluteRange {
  startMs: number;
  endMs: number;
}

export type ParseResult<T> = { ok: true; value: T } | { ok: false; error: string };

// RFC 3339, with a space allowed for the T as every page prints times ("2026-09-11 13:12Z"), so a time read off the screen can be typed back.
const RFC3339 = /^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d{1,9})?)?(?:Z|[+-]\d{2}:\d{2})$/i;
// Year 2000 .. 2200 in ms: anything outside is almost certainly seconds or garbage.
const MIN_EPOCH_MS = 946_684_800_000;
const MAX_EPOCH_MS = 7_258_118_400_000;

/** Parses one end of a range: "now", "now-6h", epoch milliseconds, or RFC 3339. */
export function parseTimeExpr(text: string): ParseResult<TimeExpr> {
  const value = text.trim();
  if (value === "now") return { ok: true, value: { kind: "relative", agoMs: 0 } };
  if (value.startsWith("now-")) {
    const agoMs = parseDurationMs(value.slice(4));
    if (agoMs === null) {
      return { ok: false, error: `"${clip(value)}" is not a relative time; use now-<duration> such as now-6h or now-30m` };
    }
    return { ok: true, value: { kind: "relative", agoMs } };
  }
  if (/^\d+$/.test(value)) {
    const ms = Number(value);
    if (ms < MIN_EPOCH_MS || ms > MAX_EPOCH_MS) {
      return { ok: false, error: `"${clip(value)}" is not an epoch time in milliseconds between 2000 and 2200` };
    }
    return { ok: true, value: { kind: "absolute", ms } };
  }
  if (RFC3339.test(value)) {
    const ms = Date.parse(value.replace(" ", "T"));
    if (Number.isFinite(ms) && ms >= MIN_EPOCH_MS && ms <= MAX_EPOCH_MS) {
      return { ok: true, value: { kind: "absolute", ms } };
    }
  }
  return {
    ok: false,
    error: `"${clip(value)}" is not a time; use now, now-<duration>, epoch milliseconds, or a UTC time such as 2026-09-11 13:12Z`,
  };
}

export function formatTimeExpr(expr: TimeExpr): string {
  if (expr.kind === "absolute") return String(expr.ms);
  return expr.agoMs === 0 ? "now" : `now-${formatDurationMs(expr.agoMs)}`;
}

export function resolveTimeExpr(expr: TimeExpr, nowMs: number): number {
  return expr.kind === "absolute" ? expr.ms : nowMs - expr.agoMs;
}

export function resolveRange(range: TimeRangeInput, nowMs: number): AbsoluteRange {
  return { startMs: resolveTimeExpr(range.from, nowMs), endMs: resolveTimeExpr(range.to, nowMs) };
}

/** The same window frozen at `nowMs`: what "Copy link" shares so the link never rots. */
export function freezeRange(range: TimeRangeInput, nowMs: number): TimeRangeInput {
  const { startMs, endMs } = resolveRange(range, nowMs);
  return { from: { kind: "absolute", ms: startMs }, to: { kind: "absolute", ms: endMs } };
}

export const DEFAULT_RANGE: TimeRangeInput = {
  from: { kind: "relative", agoMs: 6 * 3_600_000 },
  to: { kind: "relative", agoMs: 0 },
};

/** The window of the same length that ends where this one starts. */
export function previousRange(range: AbsoluteRange): AbsoluteRange {
  const lengthMs = range.endMs - range.startMs;
  return { startMs: range.startMs - lengthMs, endMs: range.startMs };
}

function clip(text: string): string {
  return text.length > 60 ? `${text.slice(0, 57)}…` : text;
}

/** The range a view opens on when its URL names none: the last 6 hours. */
export const DEFAULT_FROM = "now-6h";
export const DEFAULT_TO = "now";

/** Reads `from`/`to` URL values; on bad input returns the default range and says why. */
export function parseRangeParams(from: string | null | undefined, to: string | null | undefined): { range: TimeRangeInput; errors: string[] } {
  const errors: string[] = [];
  const f = parseTimeExpr(from ?? DEFAULT_FROM);
  const t = parseTimeExpr(to ?? DEFAULT_TO);
  if (!f.ok) errors.push(`from: ${f.error}`);
  if (!t.ok) errors.push(`to: ${t.error}`);
  if (!f.ok || !t.ok) return { range: DEFAULT_RANGE, errors };
  const range = { from: f.value, to: t.value };
  // Only ends of one kind can be ordered without a clock: an absolute start with "now" as the end
  // (an alert link while the alert fires) is valid whenever now is later, which the API checks.
  const probe = resolveRange(range, 0);
  if (range.from.kind === range.to.kind && probe.endMs <= probe.startMs) return { range: DEFAULT_RANGE, errors: ["`to` must be later than `from`"] };
  return { range, errors };
}

/** A link's `at` (a before/after time) as the pages read it: epoch milliseconds, or nothing. */
export function parseAtParam(at: string | null | undefined): number | undefined {
  return at !== null && at !== undefined && /^\d{1,15}$/.test(at) ? Number(at) : undefined;
}
