/** Times are shown in UTC, as incident timelines and alerts are written. */

const pad = (n: number) => String(n).padStart(2, "0");

/** 2026-09-11 13:12:00Z */
export function formatUtc(ms: number, withSeconds = true): string {
  const d = new Date(ms);
  const date = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}`;
  const time = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}${withSeconds ? `:${pad(d.getUTCSeconds())}` : ""}`;
  return `${date} ${time}Z`;
}

/** Axis tick: "13:12" within a day, "09-11 13:12" across days. */
export function formatAxisTime(ms: number, spanMs: number): string {
  const d = new Date(ms);
  const hm = `${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}`;
  return spanMs > 86_400_000 ? `${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())} ${hm}` : hm;
}

/** "2026-09-11 12:00Z → 16:00Z (4h)" */
export function formatRange(startMs: number, endMs: number): string {
  const start = formatUtc(startMs, false);
  const end = formatUtc(endMs, false);
  const sameDay = start.slice(0, 10) === end.slice(0, 10);
  return `${start} → ${sameDay ? end.slice(11) : end}`;
}

const TICK_INTERVALS_MS = [
  60_000, 300_000, 600_000, 900_000, 1_800_000, 3_600_000, 7_200_000, 10_800_000, 21_600_000, 43_200_000, 86_400_000, 172_800_000, 604_800_000,
];

/** Axis ticks on round UTC times (every 30 min, 1 h, 6 h …), at most about `maxTicks` of them. */
export function timeTicks(startMs: number, endMs: number, maxTicks: number): number[] {
  const span = endMs - startMs;
  if (!(span > 0) || maxTicks < 1) return [];
  const interval = TICK_INTERVALS_MS.find((i) => span / i <= maxTicks) ?? Math.ceil(span / maxTicks / 86_400_000) * 86_400_000;
  const ticks: number[] = [];
  for (let t = Math.ceil(startMs / interval) * interval; t <= endMs; t += interval) ticks.push(t);
  return ticks;
}
