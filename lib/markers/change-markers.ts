/** Recorded changes (churn/changes.ts) as chart markers: the change in a line, and what it changed as the detail. */
import type { RecordedChange } from "../churn/changes";
import { objectLabel } from "../objects/key";
import type { ObjectKey } from "../wire/objects";
import type { Marker } from "./marker";

/** Diff lines a marker's detail carries; the rest are counted. */
const DETAIL_LINES = 12;

export function changeMarker(change: RecordedChange & { key: ObjectKey; tsMs: number; writer: string }): Marker {
  const { key } = change;
  const where = `${objectLabel(key)} on ${key.cluster}${change.writer ? `, by ${change.writer}` : ""}`;
  const lines = change.diff.slice(0, DETAIL_LINES).map((line) => `${line.path}: ${line.before || "(none)"} → ${line.after || "(none)"}`);
  const more = change.diff.length > DETAIL_LINES ? [`… and ${change.diff.length - DETAIL_LINES} more`] : [];
  const detail = [where, ...lines, ...more].join("\n");
  // A snapshot keeps a marker's detail to 2,000 characters.
  return { timeMs: change.tsMs, label: change.summary, detail: detail.length <= 2_000 ? detail : `${detail.slice(0, 1_999)}…`, kind: "change" };
}
