/**
 * A counter's exact rise over a range (the totals tables' query) on every metric store, where its process restarts
 * at the range's start: the new process counting past what the old one had reached is what a two-version rollout
 * does (one process exits as the range starts, the next begins). Expected values are read from the samples: each
 * step's rise, or the value after a fall (a restart counts from zero).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { exactIncrease } from "@/lib/panels/queries";
import type { CounterSeries } from "@/lib/scenario/counters";
import { METRIC_STORES } from "../helpers/metric-stores";
import type { TestPrometheus } from "../helpers/prometheus";

const STEP = 15;
// Samples at 5 s past each 15 s mark, so no sample sits on an edge and every engine reads the same ones.
const FIRST = Date.parse("2026-09-11T12:00:05Z") / 1000;
const RANGE_START = Date.parse("2026-09-11T12:10:00Z") / 1000;
const RANGE_END = Date.parse("2026-09-11T12:20:00Z") / 1000;
const SAMPLES = 120;

/** A counter sampled every 15 s from FIRST: `before` per step until the range starts, then `after` per step; restarted there when asked. */
function counter(kind: string, before: number, after: number, restart: boolean, bornAt = FIRST): CounterSeries {
  const first = Math.round((bornAt - FIRST) / STEP);
  const values: number[] = [];
  let value = 0;
  for (let i = first; i < SAMPLES; i++) {
    const t = FIRST + i * STEP;
    const inRange = t > RANGE_START;
    if (inRange && restart && FIRST + (i - 1) * STEP < RANGE_START) value = 0;
    if (i > first) value += inRange ? after : before;
    values.push(value);
  }
  return {
    name: "rest_client_requests_total",
    labels: { job: "component", instance: kind, kind },
    startSeconds: FIRST + first * STEP,
    intervalSeconds: STEP,
    values: Float64Array.from(values),
  };
}

const up = (instance: string): CounterSeries => ({
  name: "up",
  kind: "gauge",
  labels: { job: "component", instance },
  startSeconds: FIRST,
  intervalSeconds: STEP,
  values: new Float64Array(SAMPLES).fill(1),
});

const SERIES = [
  counter("steady", 3, 4, false),
  counter("restarted-higher", 2, 9, true),
  counter("restarted-lower", 10, 1, true),
  counter("born", 0, 6, false, RANGE_START + 5 + 2 * STEP),
];

/** What the samples say was counted in (RANGE_START, RANGE_END]: each rise, and after a fall the value itself. */
function truth(series: CounterSeries): number {
  let total = 0;
  let previous: number | undefined;
  for (let i = 0; i < series.values.length; i++) {
    const t = series.startSeconds + i * series.intervalSeconds;
    const value = series.values[i];
    if (t > RANGE_START && t <= RANGE_END) total += previous === undefined || value < previous ? value : value - previous;
    previous = value;
  }
  return total;
}

describe.each(METRIC_STORES)("on $name", (store) => {
  let prom: TestPrometheus;
  beforeAll(async () => {
    prom = await store.start([...SERIES, ...SERIES.map((s) => up(s.labels.instance))]);
  }, 120_000);
  afterAll(async () => prom?.stop());

  it("counts what each counter counted in the range, whether its process went on, restarted at the range's start or began in it", async () => {
    const query = `sum by (kind) (${exactIncrease('rest_client_requests_total{job="component"}', RANGE_END - RANGE_START)})`;
    const res = await fetch(`${prom.url}/api/v1/query?${new URLSearchParams({ query, time: String(RANGE_END) })}`);
    const body = await res.json();
    expect(res.status, JSON.stringify(body)).toBe(200);
    const counted = Object.fromEntries(
      (body.data.result as { metric: { kind: string }; value: [number, string] }[]).map((r) => [r.metric.kind, Number(r.value[1])]),
    );
    const expected = Object.fromEntries(SERIES.map((s) => [s.labels.kind, truth(s)]));
    // The case this guards: the old process had counted less than the new one by the range's end.
    expect(expected["restarted-higher"]).toBeGreaterThan(SERIES[1].values[Math.floor((RANGE_START - FIRST) / STEP)]);
    expect(counted).toEqual(expected);
  });
});
