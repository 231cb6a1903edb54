/**
 * Turns timestamped events into series sampled on a scrape grid, the way a Prometheus scrape would
 * see them: a counter's value at a scrape is the sum of the events at or before it, a gauge's is
 * the last value set at or before it. Histograms are their _bucket/_sum/_count counters, summaries their _sum/_count.
 */
import type { CounterSeries, Grid } from "./counters";

export type MetricKind = "counter" | "gauge" | "histogram" | "summary";

interface Pending {
  name: string;
  labels: Record<string, string>;
  kind: MetricKind;
  family?: string;
  /** [tSeconds, amount] pairs in any order; amounts are integers (sums are kept in integer milli-units). */
  events: number[];
  scale: number;
}

export class SeriesBuilder {
  private readonly series = new Map<string, Pending>();

  constructor(private readonly grid: Grid) {}

  private entry(name: string, labels: Record<string, string>, kind: MetricKind, family: string | undefined, scale: number): Pending {
    // Built by hand: this runs once per event (millions for the replay), and a JSON key took most of its time.
    let key = name;
    for (const label of Object.keys(labels).sort()) key += `\u0000${label}\u0001${labels[label]}`;
    let pending = this.series.get(key);
    if (!pending) {
      pending = { name, labels, kind, family, events: [], scale };
      this.series.set(key, pending);
    }
    return pending;
  }

  /** Makes a series exist even if nothing ever happens to it (Prometheus would still scrape its zeros). */
  declare(name: string, labels: Record<string, string>): void {
    this.entry(name, labels, "counter", undefined, 1);
  }

  count(name: string, labels: Record<string, string>, tSeconds: number, amount = 1): void {
    this.entry(name, labels, "counter", undefined, 1).events.push(tSeconds, amount);
  }

  /** Counts per scrape interval, for traffic that is not modelled event by event. */
  countPerInterval(name: string, labels: Record<string, string>, perInterval: (intervalEndSeconds: number) => number): void {
    const entry = this.entry(name, labels, "counter", undefined, 1);
    for (let t = this.grid.startSeconds + this.grid.intervalSeconds; t <= this.grid.endSeconds; t += this.grid.intervalSeconds) {
      const n = perInterval(t);
      if (n > 0) entry.events.push(t, n);
    }
  }

  gauge(name: string, labels: Record<string, string>, tSeconds: number, value: number): void {
    this.entry(name, labels, "gauge", undefined, 1).events.push(tSeconds, value);
  }

  /** One observation, in milliseconds, of a histogram in seconds with the given upper bounds (+Inf is added). */
  observe(family: string, labels: Record<string, string>, bounds: readonly number[], tSeconds: number, valueMs: number): void {
    this.observeIn(family, labels, bounds, tSeconds, valueMs, 1000);
  }

  /** One whole-number observation of a histogram in its own unit (watchers, bytes, milliseconds), so its sum stays exact. */
  observeValue(family: string, labels: Record<string, string>, bounds: readonly number[], tSeconds: number, value: number): void {
    this.observeIn(family, labels, bounds, tSeconds, value, 1);
  }

  /** `amount` is the value in 1/`perUnit` of the histogram's unit (milliseconds of a histogram in seconds: 1000). */
  private observeIn(family: string, labels: Record<string, string>, bounds: readonly number[], tSeconds: number, amount: number, perUnit: number): void {
    for (const le of bounds) {
      const bucket = this.entry(`${family}_bucket`, { ...labels, le: String(le) }, "histogram", family, 1);
      if (amount <= le * perUnit) bucket.events.push(tSeconds, 1);
    }
    this.entry(`${family}_bucket`, { ...labels, le: "+Inf" }, "histogram", family, 1).events.push(tSeconds, 1);
    this.entry(`${family}_count`, labels, "histogram", family, 1).events.push(tSeconds, 1);
    this.entry(`${family}_sum`, labels, "histogram", family, perUnit).events.push(tSeconds, amount);
  }

  /** One observation, in milliseconds, of a summary in seconds: its _sum and _count (its quantiles are not modelled). */
  observeSummary(family: string, labels: Record<string, string>, tSeconds: number, valueMs: number): void {
    this.entry(`${family}_count`, labels, "summary", family, 1).events.push(tSeconds, 1);
    this.entry(`${family}_sum`, labels, "summary", family, 1000).events.push(tSeconds, valueMs);
  }

  /** Declares every series of a histogram so sites without observations still expose zeros (`perUnit` as for its observations). */
  declareHistogram(family: string, labels: Record<string, string>, bounds: readonly number[], perUnit = 1000): void {
    for (const le of [...bounds.map(String), "+Inf"]) this.entry(`${family}_bucket`, { ...labels, le }, "histogram", family, 1);
    this.entry(`${family}_count`, labels, "histogram", family, 1);
    this.entry(`${family}_sum`, labels, "histogram", family, perUnit);
  }

  build(): CounterSeries[] {
    const { startSeconds, endSeconds, intervalSeconds } = this.grid;
    const n = Math.floor((endSeconds - startSeconds) / intervalSeconds) + 1;
    const out: CounterSeries[] = [];
    for (const p of this.series.values()) {
      const values = new Float64Array(n);
      if (p.kind === "gauge") {
        const order = pairs(p.events).sort((a, b) => a[0] - b[0]);
        let j = 0;
        let current = 0;
        for (let i = 0; i < n; i++) {
          const t = startSeconds + i * intervalSeconds;
          while (j < order.length && order[j][0] <= t) current = order[j++][1];
          values[i] = current;
        }
      } else {
        const perSlot = new Float64Array(n);
        for (let k = 0; k < p.events.length; k += 2) {
          const t = p.events[k];
          if (t <= startSeconds || t > endSeconds) continue;
          perSlot[Math.ceil((t - startSeconds) / intervalSeconds)] += p.events[k + 1];
        }
        let sum = 0;
        for (let i = 0; i < n; i++) {
          sum += perSlot[i];
          values[i] = p.scale === 1 ? sum : sum / p.scale;
        }
      }
      out.push({ name: p.name, labels: p.labels, kind: p.kind, family: p.family, startSeconds, intervalSeconds, values });
    }
    return out.sort((a, b) => (a.name === b.name ? JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels)) : a.name.localeCompare(b.name)));
  }
}

function pairs(flat: number[]): [number, number][] {
  const out: [number, number][] = [];
  for (let k = 0; k < flat.length; k += 2) out.push([flat[k], flat[k + 1]]);
  return out;
}
