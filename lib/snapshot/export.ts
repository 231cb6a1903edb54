/**
 * Builds a snapshot by running the page's own panel requests through the same code as the live
 * page (runPanel against Prometheus). A panel that fails fails the export: a snapshot with
 * silently empty panels would mislead whoever opens it.
 */
import { ApiFailure } from "../api/envelope";
import type { PanelResult } from "../panels/run-panel";
import { panelCallKey, type PanelCall } from "../panels/write-load-requests";
import {
  SNAPSHOT_FORMAT,
  SNAPSHOT_VERSION,
  type ApiCallsBundle,
  AuditRequests,
  type ObjectWrites,
  type PanelEntry,
  type Snapshot,
  type SnapshotMarker,
} from "./format/schema";

export interface ExportInput {
  title: string;
  description?: string;
  source: Snapshot["source"];
  takenAtMs: number;
  /** the ranges the snapshot offers, first = the one it opens with */
  ranges: Snapshot["ranges"];
  initialView?: Snapshot["initialView"];
  apiservers: Snapshot["apiservers"];
  views: Snapshot["views"];
  siteLabel?: string;
  /** the panel calls to capture, e.g. every range × API server × drilled-in resource of each view */
  calls: PanelCall[];
  markers: SnapshotMarker[];
  objectWrites: ObjectWrites | null;
  auditRequests?: AuditRequests;
  apiCalls?: ApiCallsBundle;
}

export type RunCall = (call: PanelCall) => Promise<PanelResult>;

export async function buildSnapshot(input: ExportInput, run: RunCall, concurrency = 4): Promise<Snapshot> {
  const calls = [...new Map(input.calls.map((c) => [panelCallKey(c), c])).values()];
  const panels: PanelEntry[] = new Array(calls.length);
  let next = 0;
  const worker = async () => {
    while (next < calls.length) {
      const i = next++;
      const call = calls[i];
      try {
        panels[i] = { ...call, result: await run(call) };
      } catch (error) {
        const reason = error instanceof Error ? error.message : String(error);
        const status = ApiFailure.is(error) ? error.httpStatus : 502;
        throw new ApiFailure(
          status,
          "export_failed",
          `the snapshot was not made: panel ${call.panel}${call.resource ? ` (${call.resource})` : ""} failed: ${reason}`,
        );
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, calls.length) }, worker));
  return {
    format: SNAPSHOT_FORMAT,
    version: SNAPSHOT_VERSION,
    title: input.title,
    ...(input.description ? { description: input.description } : {}),
    takenAtMs: input.takenAtMs,
    source: input.source,
    views: input.views,
    ...(input.siteLabel ? { siteLabel: input.siteLabel } : {}),
    ranges: input.ranges,
    ...(input.initialView ? { initialView: input.initialView } : {}),
    apiservers: input.apiservers,
    panels,
    markers: input.markers,
    objectWrites: input.objectWrites,
    ...(input.auditRequests ? { auditRequests: input.auditRequests } : {}),
    ...(input.apiCalls ? { apiCalls: input.apiCalls } : {}),
  };
}
