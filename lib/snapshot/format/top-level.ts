/**
 * Where a JSON object's top-level values lie in its text, without parsing it: re-sharing a stored bundle changes
 * two small values (its markers and the view it opens on) in tens of megabytes of JSON, and writing those two
 * into the text costs a fraction of parsing it and writing it all again.
 */

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACE = 0x7d;
const CLOSE_BRACKET = 0x5d;
const COMMA = 0x2c;
const COLON = 0x3a;

/**
 * The end of the string whose opening quote is at `open` (the index after its closing quote, the next quote not escaped
 * by an odd run of backslashes; the text's length if it has none). Found by indexOf: most of a bundle is strings, and a
 * loop per character took twice as long.
 */
export function stringEnd(text: string, open: number): number {
  for (let quote = text.indexOf('"', open + 1); quote !== -1; quote = text.indexOf('"', quote + 1)) {
    let before = quote - 1;
    while (text.charCodeAt(before) === BACKSLASH) before--;
    if ((quote - 1 - before) % 2 === 0) return quote + 1;
  }
  return text.length;
}

/**
 * The [start, end) of each wanted key's value in a JSON object's text (keys without escapes, as a bundle's are).
 * Stops once every wanted key is found, so a bundle's bulk after them is not read.
 */
export function topLevelValues(text: string, wanted: readonly string[]): Map<string, [number, number]> {
  const found = new Map<string, [number, number]>();
  let i = text.indexOf("{");
  if (i === -1) throw new Error("not a JSON object");
  i++;
  while (i < text.length && found.size < wanted.length) {
    const keyAt = text.indexOf('"', i);
    if (keyAt === -1) break;
    const keyEnd = stringEnd(text, keyAt);
    const key = text.slice(keyAt + 1, keyEnd - 1);
    const colon = text.indexOf(":", keyEnd);
    if (colon === -1 || text.charCodeAt(colon) !== COLON) throw new Error("a key without a value");
    let start = colon + 1;
    while (/\s/.test(text[start])) start++;
    // The value runs to the comma or brace that closes it at this depth.
    let depth = 0;
    let j = start;
    for (; j < text.length; j++) {
      const c = text.charCodeAt(j);
      if (c === QUOTE) j = stringEnd(text, j) - 1;
      else if (c === OPEN_BRACE || c === OPEN_BRACKET) depth++;
      else if (c === CLOSE_BRACE || c === CLOSE_BRACKET) {
        if (depth === 0) break;
        depth--;
      } else if (c === COMMA && depth === 0) break;
    }
    let end = j;
    while (end > start && /\s/.test(text[end - 1])) end--;
    if (wanted.includes(key)) found.set(key, [start, end]);
    if (text.charCodeAt(j) === CLOSE_BRACE) break;
    i = j + 1;
  }
  return found;
}

/**
 * The text with top-level values replaced: each key's new value from its old one (undefined when the object has
 * none, and then the key is added first).
 */
export function withTopLevelValues(text: string, values: Record<string, (old: string | undefined) => string>): string {
  const keys = Object.keys(values);
  const spans = topLevelValues(text, keys);
  const replaced = [...spans.entries()].sort((a, b) => a[1][0] - b[1][0]);
  const parts: string[] = [];
  let at = 0;
  for (const [key, [start, end]] of replaced) {
    parts.push(text.slice(at, start), values[key](text.slice(start, end)));
    at = end;
  }
  parts.push(text.slice(at));
  const added = keys.filter((k) => !spans.has(k)).map((k) => `${JSON.stringify(k)}:${values[k](undefined)},`);
  if (added.length === 0) return parts.join("");
  const open = text.indexOf("{") + 1;
  // The object was empty: no comma after the last key added.
  const body = parts.join("");
  const empty = /^\s*}/.test(body.slice(open));
  return body.slice(0, open) + (empty ? added.join("").slice(0, -1) : added.join("")) + body.slice(open);
}
