/** Object URLs: every valid name, namespace and cluster round-trips through objectPath, a URL and back, whether its segments arrive decoded or not. */
import { describe, expect, it } from "vitest";
import { ApiFailure } from "@/lib/api/envelope";
import { objectKeyFromSegments, objectPath } from "@/lib/objects/key";
import { createRng } from "@/lib/scenario/rng";
import type { ObjectKey } from "@/lib/wire/objects";

// What Kubernetes allows in a path-segment name (RBAC's system:* among them): anything but "/" and "%".
const NAME_CHARS = [..."abcz09-.:_~!$&'()*+,;=@ ?#[]\"<>^`{|}", "ü", "ß", "名", "前", "🙂", "\u00a0"];
const DNS_CHARS = [..."abcdefxyz0123456789-"];

function pick(next: () => number, chars: string[], min: number, max: number): string {
  const length = min + Math.floor(next() * (max - min + 1));
  return Array.from({ length }, () => chars[Math.floor(next() * chars.length)]).join("");
}

function keys(count: number): ObjectKey[] {
  // Seeded, so a failure names the same keys on every run.
  const next = createRng(19);
  return Array.from({ length: count }, (_, i) => ({
    cluster: `c${pick(next, DNS_CHARS, 0, 12)}`,
    group: i % 5 === 0 ? "" : `${pick(next, DNS_CHARS, 1, 8)}.example.io`,
    kind: i % 2 ? "Role" : "ClusterRole",
    namespace: i % 3 === 0 ? "" : `n${pick(next, DNS_CHARS, 0, 20)}`,
    name: pick(next, NAME_CHARS, 1, 40).replace(/^\.{1,2}$/, "x"),
  }));
}

const segmentsOf = (pathname: string, prefix: string) => pathname.slice(prefix.length).split("/");

describe("objectPath and objectKeyFromSegments", () => {
  it("round-trip 2,000 keys with reserved and non-ASCII characters, through a URL, decoded or not", () => {
    for (const key of keys(2_000)) {
      const path = objectPath(key);
      expect(path.split("/")).toHaveLength(5);
      // The link as the browser sends it, and the page or the API route reading it.
      const url = new URL(`http://dashboard.test/objects/${path}?from=1&to=2`);
      const raw = segmentsOf(url.pathname, "/objects/");
      expect(objectKeyFromSegments(raw)).toEqual(key);
      expect(objectKeyFromSegments(raw.map(decodeURIComponent))).toEqual(key);
      // The timeline's own request, built from the key the page read.
      const api = new URL(`http://dashboard.test/api/objects/${objectPath(objectKeyFromSegments(raw))}/writes`);
      expect(segmentsOf(api.pathname, "/api/objects/").slice(0, 5).map(decodeURIComponent)).toEqual(raw.map(decodeURIComponent));
    }
  });

  it("names RBAC's colon names in one encoding only", () => {
    const key = { cluster: "default", group: "rbac.authorization.k8s.io", kind: "Role", namespace: "default", name: "audit2rbac:bob" };
    expect(objectPath(key)).toBe("default/rbac.authorization.k8s.io/Role/default/audit2rbac%3Abob");
    expect(objectPath(objectKeyFromSegments(["default", "rbac.authorization.k8s.io", "Role", "default", "audit2rbac%3Abob"]))).not.toContain("%25");
  });

  it("answers 400 for a malformed escape, a / or % in a name, and the wrong number of parts", () => {
    for (const segments of [
      ["c", "core", "Pod", "ns", "%zz"],
      ["c", "core", "Pod", "%E0%A4%A", "x"],
      ["c", "core", "Pod", "ns", "a%2Fb"],
      ["c", "core", "Pod", "ns", "100%25"],
      ["c", "core", "Pod", "ns"],
      ["c", "core", "Pod", "ns", ""],
    ]) {
      let failure: unknown;
      try {
        objectKeyFromSegments(segments);
      } catch (error) {
        failure = error;
      }
      expect(failure).toBeInstanceOf(ApiFailure);
      expect((failure as ApiFailure).httpStatus).toBe(400);
    }
  });
});
