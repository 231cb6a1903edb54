import { describe, expect, it } from "vitest";
import { byClause, escapeLabelValue, escapeRegex, literalAlternation, selector } from "@/lib/promql/promql";

describe("PromQL building", () => {
  it("escapes quotes, backslashes and newlines in label values", () => {
    expect(escapeLabelValue('a"b\\c\nd')).toBe('a\\"b\\\\c\\nd');
  });
  it("escapes regex metacharacters so =~ matches the literal", () => {
    expect(escapeRegex("connectors|.*")).toBe("connectors\\|\\.\\*");
    expect(literalAlternation(["a.b", "c+"])).toBe("a\\.b|c\\+");
    expect(new RegExp(`^(?:${literalAlternation(["a.b", "(x)"])})$`).test("a.b")).toBe(true);
    expect(new RegExp(`^(?:${literalAlternation(["a.b"])})$`).test("aXb")).toBe(false);
  });
  it("keeps an injection attempt inside one string literal", () => {
    const attack = 'x"} or vector(1) or up{a="';
    const q = selector("apiserver_request_total", [{ label: "job", op: "=", value: attack }]);
    expect(q).toBe('apiserver_request_total{job="x\\"} or vector(1) or up{a=\\""}');
    // Exactly one unescaped opening and closing brace: the value never closes the selector.
    const unescapedQuotes = q.match(/(?<!\\)"/g) ?? [];
    expect(unescapedQuotes).toHaveLength(2);
  });
  it("leaves out undefined matchers and rejects bad names", () => {
    expect(selector("up", [undefined, { label: "job", op: "=~", value: "a|b" }])).toBe('up{job=~"a|b"}');
    expect(() => selector("up{", [])).toThrow(/metric name/);
    expect(() => selector("up", [{ label: "bad-label", op: "=", value: "x" }])).toThrow(/label name/);
    expect(byClause([])).toBe("");
    expect(byClause(["job", "verb"])).toBe(" by (job, verb)");
  });
});
