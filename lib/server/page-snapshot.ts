/**
 * Which snapshot a page shows: the one its link names, else the replay when no Prometheus is
 * configured. A bare snapshot link is redirected to one that spells out the range and selection,
 * so whatever the browser shows can be shared as is.
 */
import { failureOf } from "../api/envelope";
import { info } from "../snapshot/lookup";
import type { SnapshotInfo } from "../snapshot/format/schema";
import type { KeptBundle } from "../snapshot/bundles";
import { REPLAY_ID } from "../snapshot/store";
import { holdingRange } from "../snapshot/format/view-range";
import type { ServerContext } from "./context";

export type Search = Record<string, string | string[] | undefined>;

/** The named parameters that appear once in a page's URL, as the page reads them. */
export function searchTexts<K extends string>(search: Search, keys: readonly K[]): { [P in K]?: string } {
  return Object.fromEntries(keys.flatMap((key) => (typeof search[key] === "string" ? [[key, search[key]]] : []))) as { [P in K]?: string };
}

export type PageSnapshot =
  | { kind: "live" }
  | { kind: "snapshot"; snapshot: SnapshotInfo }
  | { kind: "redirect"; to: string }
  /** `offers`: for a snapshot this dashboard does not hold, the ones it holds (newest first; the replay is always one) */
  | { kind: "error"; replay: boolean; message: string; offers: KeptBundle[] };

/** How many kept snapshots a link to an unknown one offers. */
const OFFERED = 10;

/** `selection` lists the URL parameters the page keeps besides from/to, and how to fill them from the snapshot's initial view. */
export async function pageSnapshot(
  ctx: ServerContext,
  search: Search,
  path: string,
  selection: Record<string, (s: SnapshotInfo) => string | undefined>,
  /** the page's live source has data even without Prometheus (object views: a recorder or ingested audit logs) */
  liveData = false,
): Promise<PageSnapshot> {
  const requested = typeof search.snapshot === "string" ? search.snapshot : undefined;
  const id = requested ?? (ctx.config.prometheus || liveData ? undefined : REPLAY_ID);
  if (id === undefined) return { kind: "live" };
  let snapshot: SnapshotInfo;
  try {
    snapshot = info(await ctx.snapshots.open(id), id);
  } catch (error) {
    const failure = failureOf(error);
    const offers = failure.httpStatus === 404 && requested !== undefined ? await ctx.snapshots.recent(OFFERED).catch(() => []) : [];
    return { kind: "error", replay: requested === undefined, message: failure.body.error, offers };
  }
  const bare = ["from", "to", ...Object.keys(selection)].every((key) => search[key] === undefined);
  if (!bare) return { kind: "snapshot", snapshot };
  // The range it was downloaded from, where the snapshot holds it (a zoom inside a held range included).
  const saved = snapshot.initialView?.range;
  const first = saved && holdingRange(snapshot.ranges, saved) ? saved : snapshot.ranges[0];
  const target = new URLSearchParams({ snapshot: snapshot.id, from: String(first.startMs), to: String(first.endMs) });
  for (const [key, fill] of Object.entries(selection)) {
    const value = fill(snapshot);
    if (value !== undefined) target.set(key, value);
  }
  return { kind: "redirect", to: `${path}?${target}` };
}

/**
 * The object views' selection from a snapshot: the scope it was downloaded with, else on the replay its Connectors
 * (the project's alone where `projectOnly`, as the lanes open).
 */
export function objectScope(projectOnly: boolean): Record<string, (s: SnapshotInfo) => string | undefined> {
  const replay = (s: SnapshotInfo) => s.source === "replay" && !s.initialView?.kind;
  return {
    cluster: (s) => s.initialView?.cluster ?? (projectOnly && replay(s) ? "milo" : undefined),
    group: (s) => s.initialView?.group ?? (replay(s) ? "networking.datumapis.com" : undefined),
    kind: (s) => s.initialView?.kind ?? (replay(s) ? "Connector" : undefined),
    namespace: (s) => s.initialView?.namespace,
  };
}
