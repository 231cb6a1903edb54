/**
 * The committed replay bundle is what `npm run replay:build` makes today: the whole pipeline
 * (generator → promtool → Prometheus → export) is re-run and its output compared byte for byte
 * (unpacked). It fails when the generator or a panel changed without rebuilding the bundle.
 */
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/root";

describe("npm run replay:build -- --check", () => {
  it("rebuilds the replay bundle and finds the committed one identical", () => {
    const run = spawnSync(process.execPath, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "lib", "cli", "replay-build.ts"), "--check"], {
      cwd: ROOT,
      encoding: "utf8",
    });
    const output = `${run.stdout}${run.stderr}`;
    expect(output).toMatch(/is up to date/);
    expect(run.status, output).toBe(0);
    // The whole pipeline took 41 s here with each 2-hour block backfilled by a promtool of its own (124 s with the
    // series split over two promtools, each reading its file once per block), and slower machines take several times
    // that: a bound, not a speed check.
  }, 600_000);
});
