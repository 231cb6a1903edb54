/** The metric stores every panel is checked on, each started with the same scenario's series and one ground truth. */
import type { CounterSeries } from "@/lib/scenario/counters";
import { startPrometheus, type TestPrometheus } from "./prometheus";
import { startVictoriaMetrics } from "./victoria-metrics";

export interface MetricStore {
  name: string;
  /** what /readyz says Churnscope found answering */
  flavor: "prometheus" | "victoriametrics";
  start: (series: CounterSeries[]) => Promise<TestPrometheus>;
}

export const METRIC_STORES: MetricStore[] = [
  { name: "Prometheus", flavor: "prometheus", start: startPrometheus },
  { name: "VictoriaMetrics", flavor: "victoriametrics", start: startVictoriaMetrics },
];
