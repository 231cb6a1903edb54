/**
 * PromQL read by Prometheus's own grammar (@prometheus-io/lezer-promql): an expression from the configuration is
 * checked before it is sent, and a counter typed in the browser must be a plain series selector
 * (`metric{label="value", other=~"a|b"}`). A selector is taken apart into a metric name and matchers and written out
 * again through promql.ts, so nothing typed reaches Prometheus except as escaped string literals; anything beyond a
 * selector (functions, operators, ranges) is refused with the column where the text stops being one.
 */
import type { SyntaxNode } from "@lezer/common";
import { parser } from "@prometheus-io/lezer-promql";
import { escapeLabelValue, type MatchOp, type Matcher } from "./promql";

export interface CounterSelector {
  metric?: string;
  matchers: Matcher[];
}

export type SelectorParse = { ok: true; selector: CounterSelector; text: string } | { ok: false; error: string };

const MAX_LENGTH = 2_000;
const LEGACY_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;

class ParseFailure extends Error {}

/** What the text holds at `pos`, as a message names it. */
function found(text: string, pos: number): string {
  return pos < text.length ? `"${text.slice(pos, pos + 12)}"` : "the end";
}

const failAt = (text: string, pos: number, expected: string): never => {
  throw new ParseFailure(`column ${pos + 1}: expected ${expected}, found ${found(text, pos)}`);
};

/** The first node the grammar could not place, if any. */
function firstError(top: SyntaxNode): SyntaxNode | undefined {
  let error: SyntaxNode | undefined;
  top.cursor().iterate((n) => {
    if (error) return false;
    if (n.type.isError) error = n.node;
    return undefined;
  });
  return error;
}

/** Whether `text` is PromQL Prometheus would parse; where not, the column and what was found there. */
export function checkPromQL(text: string): { ok: true } | { ok: false; error: string } {
  if (text.trim() === "") return { ok: false, error: "empty" };
  const error = firstError(parser.parse(text).topNode);
  return error ? { ok: false, error: `column ${error.from + 1}: unexpected ${found(text, error.from)}` } : { ok: true };
}

/** A string literal's value: PromQL takes Go's escapes; a regex's own backslash is written \\ (or in `backticks`). */
function unquote(text: string, node: SyntaxNode): string {
  const raw = text.slice(node.from, node.to);
  const quote = raw[0];
  if (raw.length < 2 || raw[raw.length - 1] !== quote) return failAt(text, node.from, `a closing ${quote}`);
  const body = raw.slice(1, -1);
  if (quote === "`") return body;
  const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", '"': '"', "'": "'" };
  let out = "";
  for (let i = 0; i < body.length; i++) {
    if (body[i] !== "\\") {
      out += body[i];
      continue;
    }
    const escaped = simple[body[i + 1]];
    if (escaped === undefined)
      failAt(text, node.from + 1 + i, "a known escape (\\n, \\t, \\r, \\\\, \\\" or \\'); write a regex backslash as \\\\ or use `backticks`");
    out += escaped;
    i++;
  }
  return out;
}

function matcherOf(text: string, node: SyntaxNode): Matcher {
  const name = node.getChild("LabelName") ?? node.getChild("QuotedLabelName");
  const op = node.getChild("MatchOp");
  const value = node.getChild("StringLiteral");
  if (!name) return failAt(text, node.from, "a label name");
  if (!op) return failAt(text, name.to, "=, !=, =~ or !~");
  if (!value) return failAt(text, op.to, "a quoted value");
  const label = name.name === "QuotedLabelName" ? unquote(text, name.getChild("StringLiteral") ?? name) : text.slice(name.from, name.to);
  if (!LEGACY_NAME.test(label)) failAt(text, name.from, "a label name of letters, digits and _");
  return { label, op: text.slice(op.from, op.to) as MatchOp, value: unquote(text, value) };
}

export function parseSelector(input: string): SelectorParse {
  const text = input.trim();
  if (text === "") return { ok: false, error: 'empty: type a counter such as apiserver_request_total{resource="connectors"}' };
  if (text.length > MAX_LENGTH) return { ok: false, error: `longer than ${MAX_LENGTH} characters` };
  try {
    const top = parser.parse(text).topNode;
    const expr = top.firstChild;
    if (!expr) return failAt(text, 0, "a metric name or {");
    if (expr.name !== "VectorSelector") {
      // Where the text stops being a selector: after the expression's first part (sum, up{…}, a function's name).
      let pos = expr.firstChild?.to ?? 0;
      while (pos < text.length && /\s/.test(text[pos])) pos++;
      return failAt(text, pos, "the end of the selector (only a selector is accepted: the window and increase() are added for you)");
    }
    // An unterminated value swallows the rest of the text: say where it began, before any later error.
    for (const literal of matcherLiterals(expr)) unquote(text, literal);
    const error = firstError(top);
    if (error) {
      const braces = expr.getChild("LabelMatchers");
      const inBraces = braces !== null && error.from > braces.from && (error.to < braces.to || text[braces.to - 1] !== "}");
      if (!inBraces) return failAt(text, error.from, "the end of the selector (only a selector is accepted: the window and increase() are added for you)");
      if (error.from >= text.length) return failAt(text, error.from, '"," or "}"');
      if (error.prevSibling?.name === "LabelName") return failAt(text, error.from, "=, !=, =~ or !~");
      if (error.prevSibling?.name === "MatchOp" || error.parent?.name === "UnquotedLabelMatcher") return failAt(text, error.from, "a quoted value");
      return failAt(text, error.from, "a label name");
    }
    const identifier = expr.getChild("Identifier");
    const metric = identifier ? text.slice(identifier.from, identifier.to) : undefined;
    const braces = expr.getChild("LabelMatchers");
    const matchers = braces
      ? braces
          .getChildren("UnquotedLabelMatcher")
          .concat(braces.getChildren("QuotedLabelMatcher"))
          .sort((a, b) => a.from - b.from)
          .map((m) => matcherOf(text, m))
      : [];
    if (braces?.getChild("QuotedLabelName") && !braces.getChild("QuotedLabelMatcher"))
      return { ok: false, error: "a quoted metric name is not supported: write it before the braces" };
    if (!metric && !matchers.some((m) => (m.op === "=" || m.op === "=~") && m.value !== "")) {
      return { ok: false, error: "a selector without a metric name needs a non-empty = or =~ matcher" };
    }
    if (metric && matchers.some((m) => m.label === "__name__")) return { ok: false, error: "the metric name is given twice" };
    const selector = { metric, matchers };
    return { ok: true, selector, text: formatSelector(selector) };
  } catch (error) {
    if (error instanceof ParseFailure) return { ok: false, error: error.message };
    throw error;
  }
}

/** Every string literal of a selector's matchers, in order. */
function matcherLiterals(expr: SyntaxNode): SyntaxNode[] {
  const out: SyntaxNode[] = [];
  expr.cursor().iterate((n) => {
    if (n.name === "StringLiteral") out.push(n.node);
  });
  return out;
}

/** The canonical text of a selector: what runs, what the URL and snapshots hold. */
export function formatSelector(selector: CounterSelector): string {
  const parts = selector.matchers.map((m) => `${m.label}${m.op}"${escapeLabelValue(m.value)}"`);
  return `${selector.metric ?? ""}{${parts.join(", ")}}`;
}
