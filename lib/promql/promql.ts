/**
 * Building PromQL from values that may come from a browser. Nothing is spliced into a query
 * except through these functions: label values are escaped as PromQL strings, and values used
 * with =~ / !~ are escaped as RE2 literals first, so "connectors|.*" matches only itself.
 */

export type MatchOp = "=" | "!=" | "=~" | "!~";

export interface Matcher {
  label: string;
  op: MatchOp;
  value: string;
}

const LABEL_NAME = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const METRIC_NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;

/** A PromQL double-quoted string literal body. */
export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, "\\\\").replace(/"/g, '\\"').replace(/\n/g, "\\n").replace(/\r/g, "\\r").replace(/\t/g, "\\t");
}

/** An RE2 pattern that matches exactly `value` (for use inside =~ after string escaping). */
export function escapeRegex(value: string): string {
  return value.replace(/[\\.+*?()|[\]{}^$]/g, "\\$&");
}

/** An anchored alternation of literal values, e.g. ["a.b", "c"] → "a\\.b|c". */
export function literalAlternation(values: readonly string[]): string {
  return values.map(escapeRegex).join("|");
}

export function assertLabelName(name: string): string {
  if (!LABEL_NAME.test(name)) throw new Error(`invalid label name ${JSON.stringify(name)}`);
  return name;
}

export function matcher(label: string, op: MatchOp, value: string): string {
  return `${assertLabelName(label)}${op}"${escapeLabelValue(value)}"`;
}

/** metric{label="value",…}; matchers with value undefined are left out. */
export function selector(metric: string, matchers: readonly (Matcher | undefined)[]): string {
  if (!METRIC_NAME.test(metric)) throw new Error(`invalid metric name ${JSON.stringify(metric)}`);
  const parts = matchers.filter((m): m is Matcher => m !== undefined).map((m) => matcher(m.label, m.op, m.value));
  return `${metric}{${parts.join(", ")}}`;
}

export function byClause(labels: readonly string[]): string {
  return labels.length === 0 ? "" : ` by (${labels.map(assertLabelName).join(", ")})`;
}
