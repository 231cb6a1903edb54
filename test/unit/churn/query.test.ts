/** Reading a path: what the recorder's own walk of plain paths answers is what jsonpath-plus answers, on every shape. */
import { JSONPath } from "jsonpath-plus";
import { describe, expect, it } from "vitest";
import { query } from "@/lib/churn/analyze";
import type { Json } from "@/lib/churn/json";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";

const KEYS = ["spec", "status", "holder-id", "_x", "length", "constructor", "__proto__", "a"];

/** Every value shape a path can meet on its way: maps (some with the keys above), lists, strings, numbers, null, booleans. */
function shapes(depth: number): Json[] {
  const leaves: Json[] = [null, "text", 0, 3, true, [], ["a", "b"], {}];
  if (depth === 0) return leaves;
  const inner = shapes(depth - 1);
  const out: Json[] = [...leaves];
  KEYS.forEach((key, i) => {
    const value = inner[(i * 5 + depth) % inner.length];
    // Parsed from text, as the watch's objects are, so "__proto__" is a key of its own.
    out.push(JSON.parse(`{${JSON.stringify(key)}: ${JSON.stringify(value)}, "a": ${JSON.stringify(inner[(i + 1) % inner.length])}}`) as Json);
  });
  out.push([inner[0], inner[inner.length - 1]]);
  return out;
}

function paths(depth: number): string[] {
  if (depth === 0) return ["$"];
  return paths(depth - 1)
    .flatMap((path) => [path, ...KEYS.map((key) => `${path}.${key}`)])
    .filter((p, i, all) => all.indexOf(p) === i);
}

const library = (path: string, json: Json) => JSONPath({ path, json: json as object, eval: "safe", wrap: true, ignoreEvalErrors: true }) as Json[];

describe("reading a path", () => {
  it("answers exactly what jsonpath-plus answers for plain paths over maps, lists and scalars", () => {
    let compared = 0;
    for (const json of shapes(3))
      for (const path of paths(3)) {
        expect(query(path, json), `${path} of ${JSON.stringify(json)}`).toEqual(library(path, json));
        compared++;
      }
    expect(compared).toBeGreaterThan(5_000);
  });

  it("reads every shipped profile's paths as jsonpath-plus does, filters included", () => {
    const connector = {
      status: { conditions: [{ type: "Ready", status: "True" }], connectionDetails: { publicKey: { id: "k1" } } },
      spec: { hostnames: ["a.example.com"], rules: [{ x: 1 }], parentRefs: [], holderIdentity: "node-1" },
      holderIdentity: "node-2",
      conditions: [{ type: "Ready", status: "False" }],
    } as Json;
    for (const profile of DEFAULT_PROFILES)
      for (const path of [profile.source.path, ...Object.values(profile.routed).map((field) => field.path)]) {
        expect(query(path, connector), path).toEqual(library(path, connector));
        expect(query(path, (connector as { status: Json }).status), path).toEqual(library(path, (connector as { status: Json }).status));
      }
  });
});
