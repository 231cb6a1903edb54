/**
 * Which rebuild profile answers for a range: the configured one, or the first whose rebuild counter
 * Prometheus holds (asked with /api/v1/series, limit 1). The histogram's bucket bounds are read
 * from the data, so the top finite bucket is what the exporter really uses (and "10" and "10.0",
 * as Prometheus 3 writes it, are the same bound).
 */
import type { PromClient, TimeBounds } from "../promql/types";
import { selector } from "../promql/promql";
import { REBUILD_PROFILES, findRebuildProfile, inSeconds, type RebuildProfile, type RebuildProfileId } from "./profiles";

export interface DetectedProfile {
  profile: RebuildProfile;
  reason: string;
  /** finite histogram bounds in seconds (whatever unit the histogram is in), ascending; empty for summaries */
  buckets: number[];
  /** the duration histogram is held only in native form here: no classic buckets to count */
  native: boolean;
}

export const countSelector = (p: RebuildProfile) => selector(p.count.metric, p.count.matchers);

export async function detectRebuildProfile(
  client: PromClient,
  bounds: TimeBounds,
  configured: "auto" | RebuildProfileId,
  signal?: AbortSignal,
): Promise<DetectedProfile | null> {
  let profile: RebuildProfile | undefined;
  let reason: string;
  if (configured !== "auto") {
    profile = findRebuildProfile(configured);
    if (!profile) return null;
    reason = `set in the configuration (rebuilds.profile: ${configured})`;
  } else {
    const tried: string[] = [];
    for (const candidate of REBUILD_PROFILES) {
      const found = await client.series([countSelector(candidate)], { ...bounds, limit: 1 }, signal);
      if (found.data.length > 0) {
        profile = candidate;
        break;
      }
      tried.push(candidate.count.metric);
    }
    if (!profile) return null;
    reason = `${countSelector(profile)} has data in this range${tried.length ? `; checked first, without data: ${[...new Set(tried)].join(", ")}` : ""}`;
  }
  let buckets: number[] = [];
  let native = false;
  const duration = profile.duration;
  if (duration?.kind === "histogram") {
    const les = await client.labelValues("le", [selector(`${duration.metric}_bucket`, duration.matchers)], bounds, signal);
    buckets = [...new Set(les.data.map(Number).filter((v) => Number.isFinite(v)))].sort((a, b) => a - b).map((v) => inSeconds(duration, v));
    // No classic buckets: the histogram may be held as one native series of the family's own name.
    if (buckets.length === 0) native = (await client.series([selector(duration.metric, duration.matchers)], { ...bounds, limit: 1 }, signal)).data.length > 0;
  }
  return { profile, reason, buckets, native };
}
