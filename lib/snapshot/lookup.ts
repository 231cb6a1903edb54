/** Answers the page's panel requests from a snapshot, and describes what a snapshot holds. */
import { ApiFailure } from "../api/envelope";
import { findPanel } from "../panels/catalog";
import type { PanelResult } from "../panels/run-panel";
import { panelCallKey, type PanelCall } from "../panels/write-load-requests";
import { formatRange } from "../format/time";
import { splitResource } from "../panels/resource-name";
import type { Snapshot, SnapshotInfo } from "./format/schema";
import { holdingRange } from "./format/view-range";
import { derivedComparison } from "./held-compare";

/**
 * What the server keeps of an open snapshot: all but its object writes, which are most of a bundle (35 of the
 * replay's 43 MB) and are read only by the Objects views, from a store built from the bundle itself
 * (store/sources.ts), as are its audit requests, read by the Clients page. `objectWriteCount` is null when the
 * snapshot holds none (taken where no recorder ran).
 */
export type HeldSnapshot = Omit<Snapshot, "objectWrites" | "auditRequests" | "apiCalls"> & {
  objectWriteCount: number | null;
  auditRequestCount: number;
  apiCallRows: number;
  auditNote?: string;
};

export function heldPart({ objectWrites, auditRequests, apiCalls, ...rest }: Snapshot): HeldSnapshot {
  return {
    ...rest,
    objectWriteCount: objectWrites ? objectWrites.writes.length : null,
    auditRequestCount: auditRequests?.requests.length ?? 0,
    apiCallRows: apiCalls?.rows.length ?? 0,
    ...(auditRequests?.note ? { auditNote: auditRequests.note } : {}),
  };
}

/** An opened snapshot: its held part, and about how many bytes that is as JSON (for the store's memory budget). */
export interface OpenedSnapshot {
  snapshot: HeldSnapshot;
  heldBytes: number;
}

export function opened(snapshot: Snapshot): OpenedSnapshot {
  const held = heldPart(snapshot);
  return { snapshot: held, heldBytes: JSON.stringify(held).length };
}

const index = new WeakMap<HeldSnapshot, Map<string, PanelResult>>();

/** The held answer to `call` for its exact range, or undefined. */
function heldAnswer(snapshot: HeldSnapshot, call: PanelCall): PanelResult | undefined {
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
  // A chart the resource only pins a series of, held without it: the same chart, the resource perhaps in "other".
  return call.resource !== undefined && findPanel(call.panel)?.resourcePinsSeries ? byKey.get(panelCallKey({ ...call, resource: undefined })) : undefined;
}

/**
 * A held chart cut to a range inside the one it was held for, at its held step: zooming a snapshot shows the
 * points it holds and never invents finer ones. A total over the held range (a table) cannot be cut: the
 * snapshot says so instead of showing the whole range's total as the zoom's.
 */
function zoomedAnswer(held: PanelResult, holding: { startMs: number; endMs: number }, call: PanelCall): PanelResult {
  const { data } = held;
  if (data.stepSeconds * 1000 >= holding.endMs - holding.startMs)
    throw new ApiFailure(
      404,
      "not_in_snapshot",
      `this snapshot holds these totals for ${formatRange(holding.startMs, holding.endMs)} only, not for a part of it; zoom out to see them`,
    );
  const series = data.series.map((s) => ({ ...s, points: s.points.filter(([tsMs]) => tsMs >= call.startMs && tsMs <= call.endMs) }));
  return { ...held, data: { ...data, startMs: call.startMs, endMs: call.endMs, series: series.filter((s) => s.points.length > 0) } };
}

export function snapshotPanel(snapshot: HeldSnapshot, call: PanelCall): PanelResult {
  const exact = heldAnswer(snapshot, call);
  if (exact) return exact;
  const holding = holdingRange(snapshot.ranges, call);
  const wider = holding && heldAnswer(snapshot, { ...call, ...holding });
  if (holding && wider) return zoomedAnswer(wider, holding, call);
  const derived = call.panel === "compare" && holding ? compareFromHeld(snapshot, holding, call) : undefined;
  if (derived) return derived;
  const ranges = snapshot.ranges.map((r) => formatRange(r.startMs, r.endMs)).join("; ");
  const inRange = holding !== undefined;
  const held = info(snapshot, "").resources[call.apiserver ?? ""] ?? [];
  const comparisons = heldComparisons(snapshot).map((c) => `${c.a} vs ${c.b} per ${c.window}`);
  throw new ApiFailure(
    404,
    "not_in_snapshot",
    call.panel === "compare" && inRange
      ? `this snapshot holds ${comparisons.length ? `only these comparisons: ${comparisons.join("; ")} (each also the other way round, and per any whole multiple of its window)` : "no comparisons"}`
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
function heldResource(snapshot: HeldSnapshot, call: PanelCall): string | undefined {
  if (!call.resource || call.resource.includes(".")) return undefined;
  const held = (info(snapshot, "").resources[call.apiserver ?? ""] ?? []).filter((r) => splitResource(r)[0] === call.resource);
  return held.length === 1 ? held[0] : undefined;
}

export function info(snapshot: HeldSnapshot, id: string): SnapshotInfo {
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
    panels: [...new Set(snapshot.panels.map((p) => p.panel))].sort(),
    objectWriteCount: snapshot.objectWriteCount ?? 0,
    auditRequestCount: snapshot.auditRequestCount,
    apiCallRows: snapshot.apiCallRows,
  };
}

/** A comparison counted from the ones held for `holding` (the other way round, or per a longer window). */
function compareFromHeld(snapshot: HeldSnapshot, holding: { startMs: number; endMs: number }, call: PanelCall): PanelResult | undefined {
  const { a, b, window } = call.args ?? {};
  if (!a || !b || !window) return undefined;
  const held = snapshot.panels.flatMap((entry) =>
    entry.panel === "compare" && entry.startMs === holding.startMs && entry.endMs === holding.endMs && entry.args?.a && entry.args.b && entry.args.window
      ? [{ a: entry.args.a, b: entry.args.b, window: entry.args.window, result: entry.result as PanelResult }]
      : [],
  );
  return derivedComparison(held, { startMs: call.startMs, endMs: call.endMs, a, b, window });
}

/** The comparisons a snapshot answers (each for its ranges), for the compare view's picks and messages. */
function heldComparisons(snapshot: HeldSnapshot): { a: string; b: string; window: string }[] {
  const out = new Map<string, { a: string; b: string; window: string }>();
  for (const entry of snapshot.panels) {
    const { a, b, window } = entry.args ?? {};
    if (entry.panel === "compare" && a && b && window) out.set(JSON.stringify([a, b, window]), { a, b, window });
  }
  return [...out.values()];
}
