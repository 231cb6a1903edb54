import { describe, expect, it } from "vitest";
import { panelCsv } from "@/lib/format/csv";
import type { PanelData } from "@/lib/panels/run-panel";

describe("panelCsv", () => {
  it("writes one row per point with every label, exact values, gaps empty, and quotes what needs it", () => {
    const data = {
      panel: "p",
      title: "t",
      unit: "writes/s",
      query: "q",
      queries: [],
      stepSeconds: 60,
      startMs: 0,
      endMs: 60_000,
      series: [
        {
          labels: { resource: "connectors", verb: "PUT" },
          points: [
            [0, 0.0333333333333],
            [60_000, null],
          ],
        },
        { labels: { resource: 'a,"b"' }, points: [[0, 2]] },
      ],
    } as PanelData;
    expect(panelCsv(data)).toBe(
      'timestamp_ms,time_utc,value,resource,verb\n0,1970-01-01T00:00:00.000Z,0.0333333333333,connectors,PUT\n60000,1970-01-01T00:01:00.000Z,,connectors,PUT\n0,1970-01-01T00:00:00.000Z,2,"a,""b""",\n',
    );
  });
});
