/** A vertical line on every time chart: a release, a note, a PromQL-found change, a recorded change or a detected onset. */
export interface Marker {
  timeMs: number;
  label: string;
  detail: string;
  kind: "release" | "note" | "query" | "change" | "onset";
  /** notes only: to delete it */
  id?: number;
}
