/** Answers the page's panel requests from a snapshot, and describes what a snapshot holds. */
import { ApiFailure } from "../api/envelope";
import type { PanelResult } from "../panels/run-panel";
import { panelCallKey, type PanelCall } from "../panels/write-load-requests";
import { formatRange } from "../format/time";
import { splitResource } from "../panels/resource-name";
import type { Snapshot, SnapshotInfo } from "./schema";

const index = new WeakMap<Snapshot, Map<string, PanelResult>>();

export function snapshotPanel(snapshot: Snapshot, call: PanelCall): PanelResult {
  let byKey = index.get(snapshot);
  if (!byKey) {
    byKey = new Map(snapshot.panels.map((entry) => [panelCallKey(entry), entry.result as PanelResult]));
    index.set(snapshot, byKey);
  }
  const exact = byKey.get(panelCallKey(call));
  if (exact) return exact;
  const widened = heldResource(snapshot, call);
  const hit = widened ? byKey.get(panelCallKey({ ...call, resource: widened })) : undefined;
  if (hit) return hit;
  const ranges = snapshot.ranges.map((r) => formatRange(r.startMs, r.endMs)).join("; ");
  const inRange = snapshot.ranges.some((r) => r.startMs === call.startMs && r.endMs === call.endMs);
  const held = info(snapshot, "").resources[call.apiserver ?? ""] ?? [];
  const comparisons = heldComparisons(snapshot).map((c) => `${c.a} vs ${c.b} per ${c.window}`);
  throw new ApiFailure(
    404,
    "not_in_snapshot",
    call.panel === "compare" && inRange
      ? `this snapshot holds ${comparisons.length ? `only these comparisons: ${comparisons.join("; ")}` : "no comparisons"}`
      : !inRange && call.panel !== "write-totals"
      ? `this snapshot holds the ranges ${ranges} only`
      : call.resource
        ? `this snapshot holds no ${call.panel} data for ${call.resource}${held.length ? `; it holds: ${held.join(", ")}` : ""}`
        : `this snapshot holds no ${call.panel} data for this selection`,
  );
}

/**
 * A bare plural ("connectors") names the one resource of that plural the snapshot holds, as it matches any group
 * when asked of Prometheus; undefined when none or several are held.
 */
function heldResource(snapshot: Snapshot, call: PanelCall): string | undefined {
  if (!call.resource || call.resource.includes(".")) return undefined;
  const held = (info(snapshot, "").resources[call.apiserver ?? ""] ?? []).filter((r) => splitResource(r)[0] === call.resource);
  return held.length === 1 ? held[0] : undefined;
}

export function info(snapshot: Snapshot, id: string): SnapshotInfo {
  const resources: Record<string, Set<string>> = {};
  for (const entry of snapshot.panels) {
    if (entry.panel !== "writes-by-verb" || !entry.resource) continue;
    (resources[entry.apiserver ?? ""] ??= new Set()).add(entry.resource);
  }
  return {
    id,
    title: snapshot.title,
    ...(snapshot.description ? { description: snapshot.description } : {}),
    takenAtMs: snapshot.takenAtMs,
    source: snapshot.source,
    views: snapshot.views,
    ...(snapshot.siteLabel ? { siteLabel: snapshot.siteLabel } : {}),
    ranges: snapshot.ranges,
    ...(snapshot.initialView ? { initialView: snapshot.initialView } : {}),
    apiservers: snapshot.apiservers,
    resources: Object.fromEntries(Object.entries(resources).map(([k, v]) => [k, [...v].sort()])),
    markers: snapshot.markers,
    comparisons: heldComparisons(snapshot),
    objectWriteCount: snapshot.objectWrites?.writes.length ?? 0,
  };
}

/** The comparisons a snapshot answers (each for its ranges), for the compare view's picks and messages. */
function heldComparisons(snapshot: Snapshot): { a: string; b: string; window: string }[] {
  const out = new Map<string, { a: string; b: string; window: string }>();
  for (const entry of snapshot.panels) {
    const { a, b, window } = entry.args ?? {};
    if (entry.panel === "compare" && a && b && window) out.set(JSON.stringify([a, b, window]), { a, b, window });
  }
  return [...out.values()];
}
