/** What /api/changes answers (the server and the browser read it alike). */
import type { WhyAnswer } from "../analysis/why";

export interface ChangesAnswer extends WhyAnswer {
  startMs: number;
  endMs: number;
  /** the writers' rates were counted per step of this length */
  stepMs: number;
  /** changes in the range; `changes` holds the first `MAX_TESTED_CHANGES` of them */
  total: number;
}
