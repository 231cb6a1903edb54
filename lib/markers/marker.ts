/** A vertical line on every time chart: a release, a note, a PromQL-found change or a detected onset. */
export interface Marker {
  timeMs: number;
  label: string;
  detail: string;
  kind: "release" | "note" | "query" | "onset";
  /** notes only: to delete it */
  id?: number;
}
