/**
 * What a page says about a link's parameter it cannot use, naming the value and what it shows instead, so a link
 * that asks for something else never shows a silent answer to another question.
 */

/** Values a link may echo back: clipped, so a hostile link cannot fill the page. */
const clip = (value: string) => (value.length > 40 ? `${value.slice(0, 39)}…` : value);

/** `site "edge-xyz" is not a site in this range (edge-ams1, edge-fra2, …): showing all sites` */
export function unknownValue(what: string, value: string, known: readonly string[], instead: string): string {
  const listed = known.length === 0 ? "there are none" : `${known.slice(0, 5).join(", ")}${known.length > 5 ? `, and ${known.length - 5} more` : ""}`;
  return `${what} "${clip(value)}" is not ${/^[aeiou]/i.test(what) ? "an" : "a"} ${what} in this range (${listed}): ${instead}`;
}

/** `at "tomorrow" is not a time (epoch milliseconds): no before/after comparison` */
export function badValue(what: string, value: string, expected: string, instead: string): string {
  return `${what} "${clip(value)}" is not ${expected}: ${instead}`;
}
