/** The metric stores every panel is checked on, each started with the same scenario's series and one ground truth. */
import type { CounterSeries } from "@/lib/scenario/counters";
import { startPrometheus, startPrometheus3, type TestPrometheus } from "./prometheus";
import { startThanos } from "./thanos";
import { startVictoriaMetrics } from "./victoria-metrics";

export interface MetricStore {
  name: string;
  /** what /readyz says Churnscope found answering */
  flavor: "prometheus" | "victoriametrics" | "thanos";
  /** how its rate() reads a window: Debian's Prometheus 2 [t−w, t]; Prometheus 3 and Thanos (its engine) (t−w, t] */
  windows: "closed" | "left-open";
  start: (series: CounterSeries[]) => Promise<TestPrometheus>;
}

export const METRIC_STORES: MetricStore[] = [
  { name: "Prometheus", flavor: "prometheus", windows: "closed", start: startPrometheus },
  { name: "Prometheus 3", flavor: "prometheus", windows: "left-open", start: startPrometheus3 },
  // MetricsQL's rate() takes the last sample before the window as its start: the closed window's figure.
  { name: "VictoriaMetrics", flavor: "victoriametrics", windows: "closed", start: startVictoriaMetrics },
  { name: "Thanos (two Prometheus replicas, deduplicated)", flavor: "thanos", windows: "left-open", start: startThanos },
];

/**
 * A panel's infos less what the engine adds of its own (how it reads windows, Thanos's merge, Prometheus 3's PromQL
 * infos such as a counter without a _total suffix): those are checked once, in write-load-api.test.ts.
 */
export const withoutEngineNotes = (infos: string[]) =>
  infos.filter((i) => !i.startsWith("This engine reads a window") && !i.startsWith("Thanos:") && !i.startsWith("PromQL info:"));
