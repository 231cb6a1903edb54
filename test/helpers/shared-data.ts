/**
 * Third-party test data (other projects' scrapes, audit logs and CRDs, and real controllers' recorded runs) is kept
 * beside the repository, in `../shared` from its root, never in it; CI lays that folder beside every clone. A test
 * names a file by its path under that folder and reads it through here, so a missing folder or file fails the test
 * with one line that says which file and where it belongs.
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { ROOT } from "./root";

export const SHARED_DIR = resolve(ROOT, "..", "shared");

/** The absolute path of `relativePath` under ../shared (e.g. "fixtures/audit-logs/falco/fal_01_003.json"). */
export function sharedData(relativePath: string): string {
  const path = join(SHARED_DIR, relativePath);
  if (!existsSync(path)) throw new Error(`third-party test data missing: ${relativePath} is expected at ${path} (the shared folder beside the repository)`);
  return path;
}
