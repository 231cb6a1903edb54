/** Answers the page's panel requests from a snapshot, and describes what a snapshot holds. */
import { ApiFailure } from "../api/envelope";
import type { PanelResult } from "../panels/run-panel";
import { panelCallKey, type PanelCall } from "../panels/write-load-requests";
import { formatRange } from "../format/time";
import type { Snapshot, SnapshotInfo } from "./schema";

const index = new WeakMap<Snapshot, Map<string, PanelResult>>();

export function snapshotPanel(snapshot: Snapshot, call: PanelCall): PanelResult {
  let byKey = index.get(snapshot);
  if (!byKey) {
    byKey = new Map(snapshot.panels.map((entry) => [panelCallKey(entry), entry.result as PanelResult]));
    index.set(snapshot, byKey);
  }
  const hit = byKey.get(panelCallKey(call));
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
