/**
 * The order test files start in when two run at once: the longest first (measured on clean clones, see
 * docs/testing.md), so that no worker is left running one long file alone at the end; the rest as vitest orders them.
 */
import { BaseSequencer, type TestSpecification } from "vitest/node";

const LONGEST_FIRST = [
  "test/integration/replay-check.test.ts",
  "test/integration/objects-api.test.ts",
  "test/integration/kube-changes.test.ts",
  "test/integration/kube-recorder.test.ts",
  "test/integration/kube-replicas.test.ts",
  "test/integration/kube-audit.test.ts",
  "test/integration/startup.test.ts",
  "test/integration/rollup-processes.test.ts",
  "test/integration/rebuilds-api.test.ts",
  "test/integration/signals-api.test.ts",
  "test/integration/snapshot-limits.test.ts",
  "test/e2e/snapshot-notes.test.ts",
  "test/e2e/replay.test.ts",
  "test/e2e/write-load.test.ts",
  "test/e2e/faults.test.ts",
  "test/e2e/lanes.test.ts",
];

const rank = (spec: TestSpecification): number => {
  const at = LONGEST_FIRST.findIndex((path) => spec.moduleId.endsWith(path));
  return at === -1 ? LONGEST_FIRST.length : at;
};

export class LongestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rest = await super.sort(files);
    // A stable sort: files not listed keep vitest's order.
    return rest
      .map((spec, i) => ({ spec, i }))
      .sort((a, b) => rank(a.spec) - rank(b.spec) || a.i - b.i)
      .map(({ spec }) => spec);
  }
}
