/** Numbers for people: exact enough to compare, with units; no silent rounding of small rates. */

/** Up to 4 significant digits for rates (0.07 writes/s, 12.35 writes/s), whole numbers for counts. */
export function formatValue(value: number | null, unit: string): string {
  if (value === null) return "no data";
  if (!Number.isFinite(value)) return `${value > 0 ? "+" : "−"}∞ ${unit}`;
  return `${formatNumber(value, unit === "writes")} ${unit}`;
}

/** A size for messages: KiB under one MiB (rounded up), else MiB with one decimal. */
export function formatBytes(bytes: number): string {
  return bytes < 1_048_576 ? `${Math.ceil(bytes / 1024)} KiB` : `${(bytes / 1_048_576).toFixed(1)} MiB`;
}

export function formatNumber(value: number, integer = false): string {
  if (integer) return Math.round(value).toLocaleString("en-US");
  if (value === 0) return "0";
  const abs = Math.abs(value);
  if (abs >= 1000) return value.toLocaleString("en-US", { maximumFractionDigits: 1 });
  // Significant digits keep 0.000347 readable where fixed decimals would show 0.000.
  return Number(value.toPrecision(4)).toString();
}

/** The change factor between two counts, e.g. "×11.6", "new", "−". */
export function formatChange(current: number, previous: number | undefined): string {
  if (previous === undefined || previous === 0) return current === 0 ? "−" : "new";
  const factor = current / previous;
  return `×${factor >= 10 ? factor.toFixed(1) : factor.toFixed(2)}`;
}

/** Compact axis ticks: 0.02, 1.5, 12k. */
export function formatTick(value: number): string {
  const abs = Math.abs(value);
  if (abs >= 1e6) return `${Number((value / 1e6).toPrecision(3))}M`;
  if (abs >= 1e3) return `${Number((value / 1e3).toPrecision(3))}k`;
  return Number(value.toPrecision(3)).toString();
}

/** A count as Prometheus returned it: whole numbers plainly, extrapolated fractions with one decimal. */
export function formatCount(value: number): string {
  return value.toLocaleString("en-US", { maximumFractionDigits: Number.isInteger(value) ? 0 : 1 });
}
