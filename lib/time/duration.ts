/** Durations as people and Prometheus write them: "90s", "15m", "6h", "1h30m", "2d", "1w". */

const UNIT_MS: Record<string, number> = {
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
  d: 86_400_000,
  w: 604_800_000,
  y: 31_536_000_000,
};

const PART = /(\d+)(ms|s|m|h|d|w|y)/g;
const WHOLE = /^(?:\d+(?:ms|s|m|h|d|w|y))+$/;

/** Parses a duration into milliseconds; returns null when the text is not a duration. */
export function parseDurationMs(text: string): number | null {
  if (!WHOLE.test(text)) return null;
  let total = 0;
  for (const match of text.matchAll(PART)) total += Number(match[1]) * UNIT_MS[match[2]];
  return Number.isSafeInteger(total) && total > 0 ? total : null;
}

/** The shortest exact form of a whole number of milliseconds, e.g. 5_400_000 → "1h30m". */
export function formatDurationMs(ms: number): string {
  if (!Number.isFinite(ms) || ms <= 0) return "0s";
  let rest = Math.round(ms);
  let out = "";
  for (const unit of ["w", "d", "h", "m", "s", "ms"]) {
    const size = UNIT_MS[unit];
    const count = Math.floor(rest / size);
    if (count > 0) {
      out += `${count}${unit}`;
      rest -= count * size;
    }
  }
  return out;
}

/** A PromQL range selector duration. Whole seconds keep it exact and valid on every Prometheus. */
export function promDuration(seconds: number): string {
  return `${Math.max(1, Math.round(seconds))}s`;
}
