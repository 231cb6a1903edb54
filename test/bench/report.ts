/** Benchmark output: one JSON object per line (what, figures, the peer's figures, the target), plus the machine. */
import { cpus, loadavg, totalmem } from "node:os";

export function report(result: Record<string, unknown>): void {
  console.log(
    JSON.stringify({
      ...result,
      machine: { cpus: cpus().length, memGiB: Math.round(totalmem() / 2 ** 30), load1: Number(loadavg()[0].toFixed(2)), node: process.version },
    }),
  );
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

export const round = (n: number, digits = 2) => Number(n.toFixed(digits));

export async function timed<T>(work: () => Promise<T>): Promise<{ ms: number; value: T }> {
  const start = performance.now();
  const value = await work();
  return { ms: performance.now() - start, value };
}
