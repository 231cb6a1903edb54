/** Writing top-level values into a bundle's JSON text gives what parsing it, changing them and writing it again gives. */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { storedText } from "@/lib/snapshot/format/codec";
import { topLevelValues, withTopLevelValues } from "@/lib/snapshot/format/top-level";
import { REPLAY_BUNDLE_PATH } from "@/lib/snapshot/store";

describe("top-level values of a JSON object's text", () => {
  const tricky = {
    title: 'a "quoted", {braced} [bracketed] title\\\\ with \\"escapes\\" and "markers": inside',
    nested: { markers: [1, 2, { markers: "no" }], s: "}]," },
    markers: [{ timeMs: 2, label: "b,}" }],
    list: ["x", ["y", { z: '"' }]],
    last: 3.5,
  };

  it("finds each value's span, however its strings and nesting look", () => {
    const text = JSON.stringify(tricky, null, 1);
    const spans = topLevelValues(text, ["title", "nested", "markers", "list", "last"]);
    for (const [key, [start, end]] of spans) expect(JSON.parse(text.slice(start, end)), key).toEqual(tricky[key as keyof typeof tricky]);
    expect([...spans.keys()].sort()).toEqual(["last", "list", "markers", "nested", "title"]);
  });

  it("replaces values, adds missing keys, and leaves every other value as it was", () => {
    const text = JSON.stringify(tricky);
    const result = withTopLevelValues(text, {
      markers: (old) => JSON.stringify([...JSON.parse(old!), { timeMs: 1, label: "a" }]),
      initialView: (old) => JSON.stringify({ page: "/", was: old ?? null }),
    });
    expect(JSON.parse(result)).toEqual({ ...tricky, markers: [...tricky.markers, { timeMs: 1, label: "a" }], initialView: { page: "/", was: null } });
    expect(JSON.parse(withTopLevelValues("{}", { markers: () => "[]" }))).toEqual({ markers: [] });
  });

  it("gives the replay bundle with new markers and view, as parsing and writing it again would", () => {
    const text = storedText(readFileSync(REPLAY_BUNDLE_PATH), 64 << 20);
    const parsed = JSON.parse(text);
    const note = { timeMs: parsed.ranges[0].startMs + 1, label: "a note", detail: "", kind: "note" };
    const view = { page: "/clients", range: parsed.ranges[1] };
    const result = withTopLevelValues(text, {
      markers: (old) => JSON.stringify([...JSON.parse(old!), note].sort((a, b) => a.timeMs - b.timeMs)),
      initialView: () => JSON.stringify(view),
    });
    expect(JSON.parse(result)).toEqual({ ...parsed, markers: [...parsed.markers, note].sort((a, b) => a.timeMs - b.timeMs), initialView: view });
  }, 20_000); // unpacks and parses the replay's 62 MB of JSON twice: seconds on a busy machine
});
