/**
 * The replay's held part (what the server keeps of it open) as JSON, written at build time beside the replay's object
 * store (lib/cli/replay-store.ts), so opening the replay parses 16 MB instead of unpacking and parsing its whole
 * bundle in a thread (about 0.3 s of a core instead of 1.6 s; a fresh server's first page waited for it). Its first
 * line names the bundle and the format it was written from: one written from another bundle, or by another
 * Churnscope, is not read, and the replay opens from its bundle as before.
 */
import { createHash } from "node:crypto";
import { existsSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { readStoredBundle } from "./format/codec";
import { heldPart, type OpenedSnapshot } from "./lookup";
import { openedFrom } from "./checked-upload";

/** Changes whenever the held part of the same bundle would (lookup.ts heldPart). */
const HELD_FORMAT = "1";

export const prebuiltHeldPath = (distDir = process.env.CHURNSCOPE_DIST_DIR || ".next") => join(distDir, "replay-held.json");

const markOf = (bundle: Uint8Array) => `${createHash("sha256").update(bundle).digest("hex")}:${HELD_FORMAT}`;

/** Writes the held part of `bundle` (the replay's, which this code built) to `path`, whole or not at all. */
export function writePrebuiltHeld(bundle: Buffer, maxBytes: number, path: string): void {
  const held = JSON.stringify(heldPart(readStoredBundle(bundle, maxBytes)));
  writeFileSync(`${path}.writing`, `${markOf(bundle)}\n${held}`);
  renameSync(`${path}.writing`, path);
}

/** The held part written for `bundle` at `path`, opened, or undefined when there is none written from it. */
export function readPrebuiltHeld(bundle: Uint8Array, path: string): OpenedSnapshot | undefined {
  if (!existsSync(/*turbopackIgnore: true*/ path)) return undefined;
  const text = readFileSync(/*turbopackIgnore: true*/ path, "utf8");
  const lineEnd = text.indexOf("\n");
  if (lineEnd < 0 || text.slice(0, lineEnd) !== markOf(bundle)) return undefined;
  return openedFrom(text.slice(lineEnd + 1));
}
