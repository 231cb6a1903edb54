/** Prometheus HTTP API wire types (prefixed Prom*) and the domain types we convert them to. */

export type PromSample = [unixSeconds: number, value: string];

export interface PromMatrixSeries {
  metric: Record<string, string>;
  values?: PromSample[];
  histograms?: unknown[];
}

export interface PromVectorSeries {
  metric: Record<string, string>;
  value?: PromSample;
  histogram?: unknown;
}

export type PromQueryData =
  | { resultType: "matrix"; result: PromMatrixSeries[] }
  | { resultType: "vector"; result: PromVectorSeries[] }
  | { resultType: "scalar"; result: PromSample }
  | { resultType: "string"; result: PromSample };

export interface PromMetadataEntry {
  type: string;
  help: string;
  unit: string;
}

/** What every successful call returns: the data plus the notices Prometheus attached to it. */
export interface PromResult<T> {
  data: T;
  warnings: string[];
  infos: string[];
  /** set when the answer carries VictoriaMetrics' own statistics (flavor.ts) */
  servedBy?: "victoriametrics";
}

/** A point in the domain: epoch milliseconds and a number (null for NaN, so charts draw a gap). */
export type Point = [tsMs: number, value: number | null];

export interface Series {
  labels: Record<string, string>;
  points: Point[];
}

export interface RangeParams {
  startSeconds: number;
  endSeconds: number;
  stepSeconds: number;
}

export interface TimeBounds {
  startSeconds?: number;
  endSeconds?: number;
}

/** What reads Prometheus needs of a client: lib/prometheus/client.ts speaks HTTP to one. */
export interface PromClient {
  query(expr: string, timeSeconds: number, signal?: AbortSignal): Promise<PromResult<PromQueryData>>;
  queryRange(expr: string, range: RangeParams, signal?: AbortSignal): Promise<PromResult<PromQueryData>>;
  series(match: string[], bounds?: TimeBounds & { limit?: number }, signal?: AbortSignal): Promise<PromResult<Record<string, string>[]>>;
  labels(match: string[], bounds?: TimeBounds, signal?: AbortSignal): Promise<PromResult<string[]>>;
  labelValues(label: string, match: string[], bounds?: TimeBounds, signal?: AbortSignal): Promise<PromResult<string[]>>;
  metadata(metric?: string, signal?: AbortSignal): Promise<PromResult<Record<string, PromMetadataEntry[]>>>;
  /** Thanos Query's list of the stores it reads (/api/v1/stores); Prometheus and VictoriaMetrics have no such endpoint and fail */
  thanosStores(signal?: AbortSignal): Promise<PromResult<unknown>>;
}
