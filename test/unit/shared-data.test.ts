/** Third-party data is read from the shared folder beside the repository; a missing file fails with one line naming it. */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/root";
import { SHARED_DIR, sharedData } from "../helpers/shared-data";

describe("sharedData", () => {
  it("finds a file of ../shared by its path there", () => {
    expect(SHARED_DIR).toBe(join(ROOT, "..", "shared"));
    expect(readFileSync(sharedData("fixtures/README.md"), "utf8")).toMatch(/Third-party test data/);
  });

  it("fails with one line naming a missing file and the path where it is expected", () => {
    const missing = "fixtures/audit-logs/not-there.log";
    expect(() => sharedData(missing)).toThrowError(
      `third-party test data missing: ${missing} is expected at ${join(ROOT, "..", "shared", missing)} (the shared folder beside the repository)`,
    );
  });
});
