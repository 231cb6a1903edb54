/** A benchmark's scratch directory: made under the system's temporary directory and removed when the process exits. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const made: string[] = [];
// Stores of hundreds of megabytes each: a benchmark run again and again must not leave them behind.
process.on("exit", () => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true });
});
for (const signal of ["SIGINT", "SIGTERM"] as const) process.once(signal, () => process.exit(130));

export function scratchDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), `churnscope-bench-${prefix}-`));
  made.push(dir);
  return dir;
}
