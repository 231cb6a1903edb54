/** Prometheus wire results → domain Series (epoch ms, numbers, null for NaN). */
import { PromError } from "./errors";
import type { Point, PromQueryData, PromSample, Series } from "./types";

/** Prometheus writes infinities as "+Inf"/"-Inf", which Number() does not parse; NaN becomes a gap. */
export function sampleValue(raw: string): number | null {
  if (raw === "+Inf" || raw === "Inf") return Infinity;
  if (raw === "-Inf") return -Infinity;
  const value = Number(raw);
  return Number.isNaN(value) ? null : value;
}

function toPoint([seconds, raw]: PromSample): Point {
  return [Math.round(seconds * 1000), sampleValue(raw)];
}

export function toSeries(data: PromQueryData): Series[] {
  switch (data.resultType) {
    case "matrix":
      return data.result.map((s) => {
        if (!s.values && s.histograms) throw nativeHistogram();
        return { labels: s.metric, points: (s.values ?? []).map(toPoint) };
      });
    case "vector":
      return data.result.map((s) => {
        if (!s.value && s.histogram) throw nativeHistogram();
        return { labels: s.metric, points: s.value ? [toPoint(s.value)] : [] };
      });
    case "scalar":
      return [{ labels: {}, points: [toPoint(data.result)] }];
    default:
      throw new PromError("bad_response", `unexpected result type ${JSON.stringify((data as { resultType?: unknown }).resultType)}`);
  }
}

function nativeHistogram(): PromError {
  return new PromError("bad_response", "the query returned native histograms, which this panel cannot show");
}
