/**
 * Markers found by PromQL (config `markerQueries`): a marker wherever a series of the expression
 * appears, i.e. has a value after having none. `nso_build_info` gains a series with a new
 * `version` label when a release rolls out; `changes(x[5m]) > 0` appears where x changes.
 * Series already present at the start of the range mark nothing: they did not start there.
 */
import type { PromClient } from "../promql/types";
import { toSeries } from "../promql/to-series";
import type { Series } from "../promql/types";
import { alignToStep, chooseStepSeconds } from "../time/step";
import type { Marker } from "./marker";

export interface MarkerQuery {
  name: string;
  expr: string;
  label?: string;
  detail: string;
}

/** Most markers a query may add to one range: a flapping expression must not bury the charts. */
export const MAX_QUERY_MARKERS = 50;

export function markersFromSeries(query: MarkerQuery, series: Series[]): { markers: Marker[]; truncated: boolean } {
  const found: Marker[] = [];
  for (const s of series) {
    const name = query.label
      ? (s.labels[query.label] ?? "")
      : Object.entries(s.labels)
          .map(([k, v]) => `${k}="${v}"`)
          .join(", ");
    s.points.forEach(([timeMs, value], i) => {
      if (i === 0 || value === null || s.points[i - 1][1] !== null) return;
      found.push({
        timeMs,
        label: name ? `${query.name} ${name}` : query.name,
        detail: [
          query.detail,
          `first point of {${Object.entries(s.labels)
            .map(([k, v]) => `${k}="${v}"`)
            .join(", ")}}`,
          `from ${query.expr}`,
        ]
          .filter(Boolean)
          .join("\n"),
        kind: "query",
      });
    });
  }
  found.sort((x, y) => x.timeMs - y.timeMs || x.label.localeCompare(y.label));
  return { markers: found.slice(0, MAX_QUERY_MARKERS), truncated: found.length > MAX_QUERY_MARKERS };
}

/** Runs each query over the range; a failing query becomes a warning, never a failed page. */
export async function runMarkerQueries(
  client: PromClient,
  queries: MarkerQuery[],
  range: { startMs: number; endMs: number },
  scrapeIntervalSeconds: number,
  signal?: AbortSignal,
): Promise<{ markers: Marker[]; warnings: string[] }> {
  const stepSeconds = chooseStepSeconds({ startMs: range.startMs, endMs: range.endMs, minStepSeconds: scrapeIntervalSeconds, maxPoints: 1000 });
  const aligned = alignToStep(range.startMs, range.endMs, stepSeconds);
  const results = await Promise.all(
    queries.map(async (query) => {
      try {
        const answer = await client.queryRange(query.expr, aligned, signal);
        const found = markersFromSeries(query, withGaps(toSeries(answer.data), aligned.startSeconds * 1000, stepSeconds * 1000));
        const warnings = answer.warnings.map((w) => `marker query ${query.name}: ${w}`);
        if (found.truncated)
          warnings.push(`marker query ${query.name}: more than ${MAX_QUERY_MARKERS} markers in this range; showing the first ${MAX_QUERY_MARKERS}`);
        return { markers: found.markers, warnings };
      } catch (error) {
        return { markers: [], warnings: [`marker query ${query.name} failed: ${(error as Error).message}`] };
      }
    }),
  );
  return { markers: results.flatMap((r) => r.markers), warnings: results.flatMap((r) => r.warnings) };
}

/** Prometheus leaves absent steps out; put them back as nulls so an appearance is visible. */
function withGaps(series: Series[], firstMs: number, stepMs: number): Series[] {
  return series.map((s) => {
    const byTime = new Map(s.points);
    const lastMs = s.points.length ? s.points[s.points.length - 1][0] : firstMs;
    const points: [number, number | null][] = [];
    for (let t = firstMs; t <= lastMs; t += stepMs) points.push([t, byTime.get(t) ?? null]);
    return { ...s, points };
  });
}
