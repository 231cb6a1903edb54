/** The precondition rule against a simulated API server whose own record of each write is the truth. */
import { describe, expect, it } from "vitest";
import { preconditionVerdicts } from "@/lib/churn/preconditions";
import { preconditionStorm } from "../../helpers/audit-log";

describe("preconditionVerdicts", () => {
  it("never calls a write no-op or changed against what the API server did, and decides every one the next write's precondition tells", () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      const succeeded = preconditionStorm(0, 400, seed).writes.filter((w) => w.code === 200);
      const verdicts = preconditionVerdicts(succeeded.map((w) => ({ precondition: w.precondition, evidence: null })));
      let decided = 0;
      for (const [i, verdict] of verdicts.entries()) {
        const next = succeeded[i + 1];
        const tells = succeeded[i].precondition !== "" && next !== undefined && next.precondition !== "";
        if (!tells) {
          expect(verdict).toEqual({ noop: null, evidence: null });
          continue;
        }
        decided++;
        expect(verdict?.noop, `write ${i} of seed ${seed}`).toBe(!succeeded[i].changed);
      }
      // Most writes in this storm are updates with a precondition: the rule decides most of them.
      expect(decided).toBeGreaterThan(succeeded.length / 2);
    }
  });

  it("leaves a write whose class rests on stronger evidence as it is", () => {
    const verdicts = preconditionVerdicts([
      { precondition: "5", evidence: "body" },
      { precondition: "5", evidence: "watch" },
      { precondition: "5", evidence: null },
    ]);
    expect(verdicts).toEqual([undefined, undefined, { noop: null, evidence: null }]);
  });
});
