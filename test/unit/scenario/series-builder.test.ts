import { describe, expect, it } from "vitest";
import { SeriesBuilder } from "@/lib/scenario/series-builder";
import { openMetricsChunks } from "@/lib/scenario/openmetrics";

const grid = { startSeconds: 1000, endSeconds: 1090, intervalSeconds: 30 };

describe("SeriesBuilder", () => {
  it("counts an event at the first scrape at or after it, and ignores events outside the grid", () => {
    const b = new SeriesBuilder(grid);
    for (const t of [1000, 1001, 1030, 1031, 1090, 1091]) b.count("x_total", { a: "1" }, t);
    const [s] = b.build();
    expect([...s.values]).toEqual([0, 2, 3, 4]);
  });

  it("keeps histogram buckets cumulative, with sums in seconds from whole milliseconds", () => {
    const b = new SeriesBuilder(grid);
    b.observe("d_seconds", { site: "a" }, [1, 10], 1010, 500);
    b.observe("d_seconds", { site: "a" }, [1, 10], 1040, 12_300);
    const byName = new Map(b.build().map((s) => [`${s.name}${s.labels.le ?? ""}`, [...s.values]]));
    expect(byName.get("d_seconds_bucket1")).toEqual([0, 1, 1, 1]);
    expect(byName.get("d_seconds_bucket10")).toEqual([0, 1, 1, 1]);
    expect(byName.get("d_seconds_bucket+Inf")).toEqual([0, 1, 2, 2]);
    expect(byName.get("d_seconds_count")).toEqual([0, 1, 2, 2]);
    expect(byName.get("d_seconds_sum")).toEqual([0, 0.5, 12.8, 12.8]);
  });

  it("keeps a histogram in its own unit exact: buckets compare the value itself, and the sum is whole", () => {
    const b = new SeriesBuilder(grid);
    b.observeValue("body_bytes", {}, [1000, 5000], 1010, 1000);
    b.observeValue("body_bytes", {}, [1000, 5000], 1040, 4001);
    const byName = new Map(b.build().map((s) => [`${s.name}${s.labels.le ?? ""}`, [...s.values]]));
    expect(byName.get("body_bytes_bucket1000")).toEqual([0, 1, 1, 1]);
    expect(byName.get("body_bytes_bucket5000")).toEqual([0, 1, 2, 2]);
    expect(byName.get("body_bytes_sum")).toEqual([0, 1000, 5001, 5001]);
  });

  it("samples a gauge as the last value set at or before each scrape", () => {
    const b = new SeriesBuilder(grid);
    b.gauge("depth", {}, 1000, 0);
    b.gauge("depth", {}, 1035, 1);
    b.gauge("depth", {}, 1050, 0);
    b.gauge("depth", {}, 1070, 1);
    expect([...b.build()[0].values]).toEqual([0, 0, 0, 1]);
  });

  it("writes histograms and gauges under their own TYPE lines", () => {
    const b = new SeriesBuilder(grid);
    b.observe("d_seconds", {}, [1], 1010, 5);
    b.gauge("depth", {}, 1000, 1);
    const text = [...openMetricsChunks(b.build())].join("");
    expect(text).toContain("# TYPE d_seconds histogram\n");
    expect(text).toContain("# TYPE depth gauge\n");
    expect(text).toContain('d_seconds_bucket{le="+Inf"} 1 1030\n');
    expect(text.endsWith("# EOF\n")).toBe(true);
  });
});
