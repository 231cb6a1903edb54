/** What /api/changes answers (the server and the browser read it alike). */
import type { WhyAnswer } from "../analysis/why";

export interface ChangesAnswer extends WhyAnswer {
  startMs: number;
  endMs: number;
  /** the writers' rates were counted per step of this length */
  stepMs: number;
  /** changes in the range, and how many of them were tested (the nearest the onset); `changes` lists at most 500 of those */
  total: number;
  tested: number;
}
