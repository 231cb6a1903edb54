/** A real Prometheus for tests, backfilled with a scenario's series (see lib/cli/backfilled-prometheus.ts). */
import type { CounterSeries } from "@/lib/scenario/counters";
import { startBackfilledPrometheus, type BackfilledPrometheus } from "@/lib/cli/backfilled-prometheus";

export type TestPrometheus = BackfilledPrometheus;
export { writeOpenMetrics } from "@/lib/cli/backfilled-prometheus";

export function startPrometheus(series: CounterSeries[]): Promise<TestPrometheus> {
  return startBackfilledPrometheus(series);
}
