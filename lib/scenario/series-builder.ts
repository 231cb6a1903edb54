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
  /** A counter's amounts, each summed into the first scrape that sees it (integers: sums are kept in integer milli-units). */
  perSlot?: Float64Array;
  /** A gauge's [tSeconds, value] pairs, in any order. */
  events: number[];
  scale: number;
}

export class SeriesBuilder {
  private readonly series = new Map<string, Pending>();

  constructor(private readonly grid: Grid) {}

  private entry(name: string, labels: Record<string, string>, kind: MetricKind, family: string | undefined, scale: number, labelsKey = keyOf(labels)): Pending {
    const key = `${name}${labelsKey}`;
    let pending = this.series.get(key);
    if (!pending) {
      pending = { name, labels, kind, family, events: [], scale, ...(kind === "gauge" ? {} : { perSlot: new Float64Array(this.slots) }) };
      this.series.set(key, pending);
    }
    return pending;
  }

  /** Scrapes on the grid, the first at its start. */
  private get slots(): number {
    return Math.floor((this.grid.endSeconds - this.grid.startSeconds) / this.grid.intervalSeconds) + 1;
  }

  /**
   * An amount at `tSeconds`, into the first scrape at or after it; none before the grid's first scrape or after its last.
   * Kept as it comes rather than as events to sort later: the replay has millions, and their arrays took most of the build.
   */
  private add(pending: Pending, tSeconds: number, amount: number): void {
    const { startSeconds, endSeconds, intervalSeconds } = this.grid;
    if (tSeconds <= startSeconds || tSeconds > endSeconds) return;
    pending.perSlot![Math.ceil((tSeconds - startSeconds) / intervalSeconds)] += amount;
  }

  /** A histogram's bucket series for `labels`, in the order of `bounds` and then +Inf: looked up once per label set, not per observation. */
  private buckets(family: string, labels: Record<string, string>, bounds: readonly number[], labelsKey: string): Pending[] {
    const key = `${family}\u0002${bounds.join(",")}\u0002${labelsKey}`;
    let entries = this.bucketEntries.get(key);
    if (!entries) {
      entries = [...bounds.map(String), "+Inf"].map((le) => this.entry(`${family}_bucket`, { ...labels, le }, "histogram", family, 1));
      this.bucketEntries.set(key, entries);
    }
    return entries;
  }

  private readonly bucketEntries = new Map<string, Pending[]>();

  /** Makes a series exist even if nothing ever happens to it (Prometheus would still scrape its zeros). */
  declare(name: string, labels: Record<string, string>): void {
    this.entry(name, labels, "counter", undefined, 1);
  }

  count(name: string, labels: Record<string, string>, tSeconds: number, amount = 1): void {
    this.add(this.entry(name, labels, "counter", undefined, 1), tSeconds, amount);
  }

  /** Counts per scrape interval, for traffic that is not modelled event by event. */
  countPerInterval(name: string, labels: Record<string, string>, perInterval: (intervalEndSeconds: number) => number): void {
    const entry = this.entry(name, labels, "counter", undefined, 1);
    for (let t = this.grid.startSeconds + this.grid.intervalSeconds; t <= this.grid.endSeconds; t += this.grid.intervalSeconds) {
      const n = perInterval(t);
      if (n > 0) this.add(entry, t, n);
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
    const labelsKey = keyOf(labels);
    const buckets = this.buckets(family, labels, bounds, labelsKey);
    for (let i = 0; i < bounds.length; i++) if (amount <= bounds[i] * perUnit) this.add(buckets[i], tSeconds, 1);
    this.add(buckets[bounds.length], tSeconds, 1);
    this.add(this.entry(`${family}_count`, labels, "histogram", family, 1, labelsKey), tSeconds, 1);
    this.add(this.entry(`${family}_sum`, labels, "histogram", family, perUnit, labelsKey), tSeconds, amount);
  }

  /** One observation, in milliseconds, of a summary in seconds: its _sum and _count (its quantiles are not modelled). */
  observeSummary(family: string, labels: Record<string, string>, tSeconds: number, valueMs: number): void {
    this.add(this.entry(`${family}_count`, labels, "summary", family, 1), tSeconds, 1);
    this.add(this.entry(`${family}_sum`, labels, "summary", family, 1000), tSeconds, valueMs);
  }

  /** Declares every series of a histogram so sites without observations still expose zeros (`perUnit` as for its observations). */
  declareHistogram(family: string, labels: Record<string, string>, bounds: readonly number[], perUnit = 1000): void {
    this.buckets(family, labels, bounds, keyOf(labels));
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
        let sum = 0;
        for (let i = 0; i < n; i++) {
          sum += p.perSlot![i];
          values[i] = p.scale === 1 ? sum : sum / p.scale;
        }
      }
      out.push({ name: p.name, labels: p.labels, kind: p.kind, family: p.family, startSeconds, intervalSeconds, values });
    }
    return out.sort((a, b) => (a.name === b.name ? JSON.stringify(a.labels).localeCompare(JSON.stringify(b.labels)) : a.name.localeCompare(b.name)));
  }
}

/** A label set as part of a series' key. Built by hand: it runs once per event (millions for the replay), and a JSON key took most of its time. */
function keyOf(labels: Record<string, string>): string {
  let key = "";
  for (const label of Object.keys(labels).sort()) key += `\u0000${label}\u0001${labels[label]}`;
  return key;
}

function pairs(flat: number[]): [number, number][] {
  const out: [number, number][] = [];
  for (let k = 0; k < flat.length; k += 2) out.push([flat[k], flat[k + 1]]);
  return out;
}
