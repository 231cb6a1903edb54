/** The repository root. Tests run from it (vitest's root); checked so a wrong cwd fails clearly. */
import { readFileSync } from "node:fs";
import { join } from "node:path";

export const ROOT = process.cwd();

const name = (() => {
  try {
    return JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).name;
  } catch {
    return undefined;
  }
})();
if (name !== "churnscope") throw new Error(`tests must run from the repository root (cwd is ${ROOT})`);
