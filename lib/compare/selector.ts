/**
 * The counter a comparison counts, typed in the browser as a PromQL series selector
 * (`metric{label="value", other=~"a|b"}`). It is parsed here into a metric name and matchers and
 * written out again through promql.ts, so nothing typed reaches Prometheus except as escaped
 * string literals; anything beyond a selector (functions, operators, ranges) is refused with the
 * column where the text stops being one.
 */
import { escapeLabelValue, type MatchOp, type Matcher } from "../promql/promql";

export interface CounterSelector {
  metric?: string;
  matchers: Matcher[];
}

export type SelectorParse = { ok: true; selector: CounterSelector; text: string } | { ok: false; error: string };

const METRIC = /[a-zA-Z_:][a-zA-Z0-9_:]*/y;
const LABEL = /[a-zA-Z_][a-zA-Z0-9_]*/y;
const OPS: MatchOp[] = ["=~", "!~", "!=", "="];
const MAX_LENGTH = 2_000;

export const SELECTOR_HELP =
  'A counter as a PromQL series selector: metric{label="value", label=~"regex", label!="value", label!~"regex"}. ' +
  "Each window counts sum(increase(selector[window])).";

class SelectorError extends Error {}

export function parseSelector(input: string): SelectorParse {
  const text = input.trim();
  if (text === "") return { ok: false, error: 'empty: type a counter such as apiserver_request_total{resource="connectors"}' };
  if (text.length > MAX_LENGTH) return { ok: false, error: `longer than ${MAX_LENGTH} characters` };
  let pos = 0;
  const fail = (expected: string): never => {
    const found = pos < text.length ? `"${text.slice(pos, pos + 12)}"` : "the end";
    throw new SelectorError(`column ${pos + 1}: expected ${expected}, found ${found}`);
  };
  const skipSpace = () => {
    while (pos < text.length && /\s/.test(text[pos])) pos++;
  };
  const token = (pattern: RegExp): string | undefined => {
    pattern.lastIndex = pos;
    const m = pattern.exec(text);
    if (!m) return undefined;
    pos += m[0].length;
    return m[0];
  };
  try {
    const metric = token(METRIC);
    skipSpace();
    const matchers: Matcher[] = [];
    if (text[pos] === "{") {
      pos++;
      skipSpace();
      while (text[pos] !== "}") {
        const label = token(LABEL) ?? fail("a label name");
        skipSpace();
        const op = OPS.find((o) => text.startsWith(o, pos)) ?? fail("=, !=, =~ or !~");
        pos += op.length;
        skipSpace();
        matchers.push({ label, op, value: readString() });
        skipSpace();
        if (text[pos] === ",") {
          pos++;
          skipSpace();
        } else if (text[pos] !== "}") fail('"," or "}"');
      }
      pos++;
      skipSpace();
    } else if (!metric) fail("a metric name or {");
    if (pos < text.length) fail("the end of the selector (only a selector is accepted: the window and increase() are added for you)");
    if (!metric && !matchers.some((m) => (m.op === "=" || m.op === "=~") && m.value !== "")) {
      return { ok: false, error: "a selector without a metric name needs a non-empty = or =~ matcher" };
    }
    if (metric && matchers.some((m) => m.label === "__name__")) return { ok: false, error: "the metric name is given twice" };
    const selector = { metric, matchers };
    return { ok: true, selector, text: formatSelector(selector) };
  } catch (error) {
    if (error instanceof SelectorError) return { ok: false, error: error.message };
    throw error;
  }

  function readString(): string {
    const quote = text[pos];
    if (quote !== '"' && quote !== "'" && quote !== "`") return fail("a quoted value");
    const start = pos;
    pos++;
    let out = "";
    while (pos < text.length && text[pos] !== quote) {
      const c = text[pos];
      if (c === "\\" && quote !== "`") {
        const next = text[pos + 1];
        // PromQL strings take Go's escapes; a regex's own backslash is written \\ (or use `raw`).
        const simple: Record<string, string> = { n: "\n", t: "\t", r: "\r", "\\": "\\", '"': '"', "'": "'" };
        if (next !== undefined && simple[next] !== undefined) {
          out += simple[next];
          pos += 2;
          continue;
        }
        return fail("a known escape (\\n, \\t, \\r, \\\\, \\\" or \\'); write a regex backslash as \\\\ or use `backticks`");
      }
      out += c;
      pos++;
    }
    if (pos >= text.length) {
      pos = start;
      return fail(`a closing ${quote}`);
    }
    pos++;
    return out;
  }
}

/** The canonical text of a selector: what runs, what the URL and snapshots hold. */
export function formatSelector(selector: CounterSelector): string {
  const parts = selector.matchers.map((m) => `${m.label}${m.op}"${escapeLabelValue(m.value)}"`);
  return `${selector.metric ?? ""}{${parts.join(", ")}}`;
}
