import { describe, expect, it } from "vitest";
import { comparePresets, counterPresets } from "@/lib/compare/catalog";
import { compareWindows, parseCompareArgs } from "@/lib/compare/compare";
import { parseSelector } from "@/lib/promql/parse";
import { compareRows } from "@/lib/compare/table";
import type { PanelData } from "@/lib/panels/run-panel";

const ok = (text: string) => {
  const parsed = parseSelector(text);
  if (!parsed.ok) throw new Error(parsed.error);
  return parsed;
};
const error = (text: string) => {
  const parsed = parseSelector(text);
  if (parsed.ok) throw new Error(`accepted ${text}`);
  return parsed.error;
};

describe("counter selectors typed in the browser", () => {
  it("parse metric names, every matcher op and every quote style into one canonical text", () => {
    expect(ok("up").text).toBe("up{}");
    expect(ok(' apiserver_request_total { job = "milo-apiserver" , verb=~\'PUT|PATCH\', code!="409", resource!~`lease.*`, } ').text).toBe(
      'apiserver_request_total{job="milo-apiserver", verb=~"PUT|PATCH", code!="409", resource!~"lease.*"}',
    );
    expect(ok('{__name__="x", a="b"}').selector).toEqual({
      metric: undefined,
      matchers: [
        { label: "__name__", op: "=", value: "x" },
        { label: "a", op: "=", value: "b" },
      ],
    });
    expect(ok("ns:metric:rate5m").selector.metric).toBe("ns:metric:rate5m");
  });

  it("keep escaped quotes and backslashes as values and write them out escaped", () => {
    const parsed = ok('m{a="say \\"hi\\"", b=~"a\\\\.b", c=`x\\.y`}');
    expect(parsed.selector.matchers.map((m) => m.value)).toEqual(['say "hi"', "a\\.b", "x\\.y"]);
    expect(parsed.text).toBe('m{a="say \\"hi\\"", b=~"a\\\\.b", c="x\\\\.y"}');
    // The canonical text parses to the same selector: what runs is what was typed.
    expect(ok(parsed.text).selector).toEqual(parsed.selector);
  });

  it("refuse anything that is not a plain selector, saying where and what was expected", () => {
    expect(error("")).toMatch(/empty/);
    expect(error("sum(up)")).toMatch(/column 4: expected the end of the selector/);
    expect(error('up{job="a"}[5m]')).toMatch(/column 12/);
    expect(error('up{job="a"} or vector(1)')).toMatch(/column 13/);
    expect(error('up{job="a"')).toMatch(/column 11: expected "," or "}"/);
    expect(error('up{job="a}')).toMatch(/column 8: expected a closing "/);
    expect(error("up{job=a}")).toMatch(/expected a quoted value/);
    expect(error('up{job=="a"}')).toMatch(/expected a quoted value/);
    expect(error("up{job}")).toMatch(/column 7: expected =, !=, =~ or !~/);
    expect(error('up{job="a"} offset 5m')).toMatch(/column 13: expected the end of the selector/);
    expect(error('up{job="x"}) or vector(1')).toMatch(/column 12: expected the end of the selector/);
    expect(error('up{1job="a"}')).toMatch(/expected a label name/);
    expect(error('up{job="\\."}')).toMatch(/known escape/);
    expect(error('{job!="a"}')).toMatch(/non-empty = or =~ matcher/);
    expect(error('up{__name__="x"}')).toMatch(/twice/);
    expect(error(`up{a="${"x".repeat(2100)}"}`)).toMatch(/longer than/);
  });

  it("never let a typed value end its string literal early", () => {
    const parsed = ok('m{a="x\\"} or vector(1) or m{a=\\""}');
    expect(parsed.selector.matchers).toHaveLength(1);
    expect(parsed.text).toBe('m{a="x\\"} or vector(1) or m{a=\\""}');
    // Re-reading the canonical text finds one matcher whose value holds the whole attempt.
    expect(ok(parsed.text).selector.matchers[0].value).toBe('x"} or vector(1) or m{a="');
  });
});

describe("compare windows and arguments", () => {
  const H = 3_600_000;
  const day = Date.UTC(2026, 8, 11);

  it("are whole windows aligned to multiples of the window since the epoch", () => {
    expect(compareWindows(day + 10 * H, day + 16 * H, 3 * H)).toEqual({ firstEndMs: day + 15 * H, lastEndMs: day + 15 * H, count: 1 });
    expect(compareWindows(day, day + 24 * H, 6 * H)).toEqual({ firstEndMs: day + 6 * H, lastEndMs: day + 24 * H, count: 4 });
    expect(compareWindows(day + 1, day + 6 * H, 6 * H).count).toBe(0);
  });

  it("validate the window and both counters, naming the parameter at fault", () => {
    expect(parseCompareArgs({ a: "x", b: "y" })).toEqual({ a: "x{}", b: "y{}", windowMs: 3 * H });
    expect(parseCompareArgs({ a: "x", b: "y", window: "90m" }).windowMs).toBe(1.5 * H);
    expect(() => parseCompareArgs({ a: "x", b: "y", window: "30s" })).toThrow(/parameter window/);
    expect(() => parseCompareArgs({ a: "x", b: "y", window: "8d" })).toThrow(/parameter window/);
    expect(() => parseCompareArgs({ a: "x", b: "y", window: "1500ms" })).toThrow(/parameter window/);
    expect(() => parseCompareArgs({ a: "x", b: "rate(y[5m])" })).toThrow(/parameter b: column 5/);
    expect(() => parseCompareArgs({ b: "y" })).toThrow(/parameter a: empty/);
  });
});

describe("the compare table", () => {
  it("pairs both counts per window, divides A by B, and totals only what is known", () => {
    const data = {
      stepSeconds: 3600,
      startMs: 0,
      endMs: 3 * 3_600_000,
      series: [
        {
          labels: { series: "A" },
          points: [
            [3_600_000, 10],
            [7_200_000, null],
            [10_800_000, 4],
          ],
        },
        {
          labels: { series: "B" },
          points: [
            [3_600_000, 5],
            [7_200_000, 3],
            [10_800_000, 0],
          ],
        },
      ],
    } as unknown as PanelData;
    const { rows, total } = compareRows(data);
    expect(rows).toEqual([
      { startMs: 0, endMs: 3_600_000, a: 10, b: 5, ratio: 2 },
      { startMs: 3_600_000, endMs: 7_200_000, a: null, b: 3, ratio: null },
      { startMs: 7_200_000, endMs: 10_800_000, a: 4, b: 0, ratio: null },
    ]);
    expect(total).toEqual({ startMs: 0, endMs: 10_800_000, a: 14, b: 8, ratio: 14 / 8 });
  });
});

describe("the counter catalog", () => {
  it("writes the configured jobs into the Connector churn write-up's selectors, and every preset parses", () => {
    const counters = counterPresets({ project: ["milo-apiserver", "milo.b"], hub: ["karmada-system/karmada-apiserver"] });
    expect(counters.find((c) => c.id === "project-connector-status-puts")?.selector).toBe(
      'apiserver_request_total{job=~"milo-apiserver|milo\\\\.b", resource="connectors", subresource="status", verb="PUT"}',
    );
    for (const c of counters) expect(parseSelector(c.selector).ok, c.id).toBe(true);
    expect(comparePresets(counters).map((p) => p.window)).toEqual(["3h", "6h"]);
    expect(comparePresets(counterPresets({ project: [], hub: [] }))).toEqual([]);
  });
});
