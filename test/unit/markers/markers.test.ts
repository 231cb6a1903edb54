import { describe, expect, it } from "vitest";
import { noteMarker } from "@/lib/store/notes";
import { MAX_QUERY_MARKERS, markersFromSeries } from "@/lib/markers/query-markers";

const query = { name: "NSO", expr: "nso_build_info", label: "version", detail: "operator release" };

describe("markers from a PromQL expression", () => {
  it("mark where a series appears, not where one was already present", () => {
    const { markers } = markersFromSeries(query, [
      {
        labels: { version: "v0.26.4" },
        points: [
          [0, 1],
          [60, 1],
          [120, null],
          [180, null],
        ],
      },
      {
        labels: { version: "v0.26.5" },
        points: [
          [0, null],
          [60, null],
          [120, 1],
          [180, 1],
        ],
      },
    ]);
    expect(markers).toEqual([
      { timeMs: 120, label: "NSO v0.26.5", detail: 'operator release\nfirst point of {version="v0.26.5"}\nfrom nso_build_info', kind: "query" },
    ]);
  });

  it("mark every reappearance (a rollback shows up again) and name by all labels without `label`", () => {
    const { markers } = markersFromSeries({ ...query, label: undefined, detail: "" }, [
      {
        labels: { job: "nso", version: "v1" },
        points: [
          [0, null],
          [60, 1],
          [120, null],
          [180, 1],
        ],
      },
    ]);
    expect(markers.map((m) => [m.timeMs, m.label])).toEqual([
      [60, 'NSO job="nso", version="v1"'],
      [180, 'NSO job="nso", version="v1"'],
    ]);
  });

  it("keep at most the first markers of a flapping expression and say so", () => {
    const points: [number, number | null][] = Array.from({ length: 400 }, (_, i) => [i * 60, i % 2 ? 1 : null]);
    const found = markersFromSeries(query, [{ labels: { version: "x" }, points }]);
    expect(found.truncated).toBe(true);
    expect(found.markers).toHaveLength(MAX_QUERY_MARKERS);
    expect(found.markers[0].timeMs).toBe(60);
  });
});

describe("notes", () => {
  const at = Date.parse("2026-09-11T14:50:00Z");
  it("shorten long notes on the chart and keep the whole text in the tooltip", () => {
    const marker = noteMarker({ id: 1, timeMs: at, text: "a".repeat(60), author: "anonymous", createdMs: at });
    expect(marker.label).toBe(`${"a".repeat(39)}…`);
    expect(marker.detail.startsWith("a".repeat(60))).toBe(true);
  });
});
