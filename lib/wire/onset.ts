/** What /api/onset answers (the server and the browser read it alike). */
import type { Unit } from "../panels/queries";

export interface OnsetAnswer {
  /** the minute the rise began: the same on every page and in every view of the range that holds it */
  timeMs: number;
  /** the write rate's level before and after it, on the range's chart */
  before: number;
  after: number;
  unit: Unit;
  /** the step and rate window the minute was read at: the finest the source has around the rise */
  stepSeconds: number;
  windowSeconds: number;
  /** the series that rose most across it, largest first */
  movers: { labels: Record<string, string>; before: number; after: number }[];
}
