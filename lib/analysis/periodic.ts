/**
 * Seed 003's pattern: one writer re-sending an object on a timer although nothing changed. Flagged
 * when an object has enough no-op writes and most gaps between them sit near one period.
 */
export interface PeriodicPattern {
  /** the typical gap between no-op writes, seconds */
  everySeconds: number;
  /** the no-op writes the pattern covers */
  writes: number;
  /** who sent most of them */
  writer: string;
}

export const MIN_PERIODIC_WRITES = 6;
/** a gap counts towards the period when within this share of it (or 1 s, for short periods) */
const TOLERANCE = 0.2;
/** the share of gaps that must fit */
const FITTING = 0.8;

/**
 * `writes` are one object's no-op writes, oldest first. A timer belongs to one writer, so each writer's
 * no-ops are read apart (another writer's no-ops in between do not hide it); the writer with the most
 * periodic no-ops is named.
 */
export function periodicNoop(writes: { tsMs: number; writer: string }[]): PeriodicPattern | null {
  const byWriter = new Map<string, { tsMs: number; writer: string }[]>();
  for (const w of writes) {
    const own = byWriter.get(w.writer);
    if (own) own.push(w);
    else byWriter.set(w.writer, [w]);
  }
  let best: PeriodicPattern | null = null;
  for (const [writer, own] of [...byWriter].sort(([a], [b]) => a.localeCompare(b))) {
    const found = timer(own.map((w) => w.tsMs));
    if (found && (!best || found.writes > best.writes)) best = { ...found, writer };
  }
  return best;
}

function timer(times: number[]): Omit<PeriodicPattern, "writer"> | null {
  if (times.length < MIN_PERIODIC_WRITES) return null;
  const gaps: number[] = [];
  for (let i = 1; i < times.length; i++) gaps.push(times[i] - times[i - 1]);
  const sorted = [...gaps].sort((a, b) => a - b);
  const median = sorted[Math.floor(sorted.length / 2)];
  if (median < 1_000) return null; // bursts, not a timer
  const slack = Math.max(1_000, median * TOLERANCE);
  const fitting = gaps.filter((g) => Math.abs(g - median) <= slack).length;
  if (fitting / gaps.length < FITTING) return null;
  return { everySeconds: Math.round(median / 100) / 10, writes: times.length };
}
