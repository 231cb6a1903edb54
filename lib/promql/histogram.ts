/**
 * Reading histograms the way Prometheus holds them: as classic _sum/_count series or as native histograms. Where the
 * engine has no native histograms (`nativeHistograms` false, see flavor.ts) only the classic series are asked.
 */

/**
 * A histogram's mean per window: its sum's rate over its count's rate, from classic series or, where Prometheus
 * holds only the native form (one series of the family's own name), from that. `rate` wraps a selector in the
 * caller's rate and grouping; `series` gives the family's selector with a suffix ("" for the native series).
 */
export function histogramMean(rate: (selector: string) => string, series: (suffix: string) => string, nativeHistograms = true): string {
  const classic = `(${rate(series("_sum"))} / ${rate(series("_count"))})`;
  if (!nativeHistograms) return classic;
  const native = rate(series(""));
  return `${classic} or (histogram_sum(${native}) / histogram_count(${native}))`;
}

/** A histogram's sum per window (e.g. seconds spent), from classic _sum series or the native form's histogram_sum. */
export function histogramSum(rate: (selector: string) => string, series: (suffix: string) => string, nativeHistograms = true): string {
  return nativeHistograms ? `${rate(series("_sum"))} or histogram_sum(${rate(series(""))})` : rate(series("_sum"));
}

/**
 * The percentage of observations above `bound` in a native histogram, per window: histogram_fraction interpolates
 * inside the bucket that holds the bound, so unless the bound is a bucket boundary this is an estimate.
 */
export function nativeShareAbove(rate: (selector: string) => string, nativeSeries: string, bound: number): string {
  return `100 * (1 - histogram_fraction(-Inf, ${bound}, ${rate(nativeSeries)}))`;
}
