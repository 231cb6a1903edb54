import { describe, expect, it } from "vitest";
import { badValue, unknownValue } from "@/lib/format/param-notices";

describe("what a page says about a parameter it cannot use", () => {
  it("names the value, what there is and what it shows instead", () => {
    expect(unknownValue("site", "edge-xyz", ["edge-ams1", "edge-fra2"], "showing all sites")).toBe(
      'site "edge-xyz" is not a site in this range (edge-ams1, edge-fra2): showing all sites',
    );
    const sites = Array.from({ length: 7 }, (_, i) => `edge-${i}`);
    expect(unknownValue("site", "x", sites, "showing all sites")).toContain("(edge-0, edge-1, edge-2, edge-3, edge-4, and 2 more)");
    expect(unknownValue("site", "x", [], "showing all sites")).toContain("(there are none)");
    expect(unknownValue("API server", "x", ["a"], "showing every API server")).toBe(
      'API server "x" is not an API server in this range (a): showing every API server',
    );
    expect(badValue("at", "tomorrow", "a time", "no before/after comparison")).toBe('at "tomorrow" is not a time: no before/after comparison');
  });
  it("clips a long value, so a link cannot fill the page", () => {
    const notice = badValue("at", "x".repeat(5000), "a time", "none");
    expect(notice.length).toBeLessThan(80);
  });
});
