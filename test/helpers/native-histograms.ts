/**
 * A scrape target that exposes native histograms, as client_golang does with NativeHistogramBucketFactor
 * set: the protobuf exposition format (length-delimited io.prometheus.client.MetricFamily), with
 * exponential buckets and no classic ones, so Prometheus stores the histogram as one native series.
 */
import { createServer, type Server } from "node:http";

function varint(value: number | bigint): number[] {
  let v = BigInt(value);
  const out: number[] = [];
  while (v > 0x7fn) {
    out.push(Number(v & 0x7fn) | 0x80);
    v >>= 7n;
  }
  out.push(Number(v));
  return out;
}
const zigzag = (n: number) => (n >= 0 ? 2 * n : -2 * n - 1);
const key = (field: number, wire: 0 | 1 | 2) => varint((field << 3) | wire);
const bytes = (field: number, body: number[]) => [...key(field, 2), ...varint(body.length), ...body];
const text = (field: number, value: string) => bytes(field, [...Buffer.from(value, "utf8")]);
const uint = (field: number, value: number) => [...key(field, 0), ...varint(value)];
function double(field: number, value: number): number[] {
  const b = Buffer.alloc(8);
  b.writeDoubleLE(value);
  return [...key(field, 1), ...b];
}

export interface NativeHistogram {
  name: string;
  labels: Record<string, string>;
  /** every observation so far has this value (a power-of-two bucket holds them all) */
  value: number;
  count: number;
}

/** One histogram family with schema 0 (bucket i holds (2^(i-1), 2^i]). */
function family(h: NativeHistogram): number[] {
  const index = Math.ceil(Math.log2(h.value));
  const histogram = [
    ...uint(1, h.count),
    ...double(2, h.count * h.value),
    ...uint(5, zigzag(0)),
    ...double(6, 0),
    ...uint(7, 0),
    ...bytes(12, [...uint(1, zigzag(index)), ...uint(2, 1)]),
    ...bytes(13, varint(zigzag(h.count))),
  ];
  const labels = Object.entries(h.labels).flatMap(([name, value]) => bytes(1, [...text(1, name), ...text(2, value)]));
  const metric = [...labels, ...bytes(7, histogram)];
  const message = [...text(1, h.name), ...text(2, "native histogram for tests"), ...uint(3, 4), ...bytes(4, metric)];
  return [...varint(message.length), ...message];
}

/** A counter family that counts each histogram's observations (a rebuild counter beside its duration). */
function counter(name: string, labels: Record<string, string>, value: number): number[] {
  const pairs = Object.entries(labels).flatMap(([k, v]) => bytes(1, [...text(1, k), ...text(2, v)]));
  const metric = [...pairs, ...bytes(3, double(1, value))];
  const message = [...text(1, name), ...text(2, "counter for tests"), ...uint(3, 0), ...bytes(4, metric)];
  return [...varint(message.length), ...message];
}

/**
 * Serves the histograms, and for each `counters` entry a counter of its histogram's observations;
 * each scrape first adds `perScrape` observations to every histogram.
 */
export async function serveNativeHistograms(
  histograms: NativeHistogram[],
  perScrape: number,
  counters: { name: string; of: string }[] = [],
): Promise<{ url: string; server: Server }> {
  const server = createServer((req, res) => {
    for (const h of histograms) h.count += perScrape;
    const counted = counters.map((c) => {
      const h = histograms.find((x) => x.name === c.of)!;
      return counter(c.name, h.labels, h.count);
    });
    res.setHeader("Content-Type", "application/vnd.google.protobuf; proto=io.prometheus.client.MetricFamily; encoding=delimited");
    res.end(Buffer.from([...histograms.flatMap(family), ...counted.flat()]));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  if (address === null || typeof address === "string") throw new Error("no port");
  return { url: `http://127.0.0.1:${address.port}`, server };
}
