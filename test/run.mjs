#!/usr/bin/env node
/**
 * `npm test`: builds the app (integration and e2e tests run `npm start` against it), then runs the
 * unit, integration and e2e projects one after another (they share two cores), prints where the time
 * went (each project's wall time and the ten slowest test files), and ends with the line CI reads:
 * "N passed, N failed".
 */
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, rmSync } from "node:fs";
import { join, relative } from "node:path";

const root = process.cwd();
const results = join(root, "test-results");
mkdirSync(results, { recursive: true });
const env = { ...process.env, NEXT_TELEMETRY_DISABLED: "1", VITE_CONFIG_NATIVE_IGNORE_WARNING: "true" };
const bin = (name) => join(root, "node_modules", ".bin", name);

let passed = 0;
let failed = 0;
let skipped = 0;
/** wall seconds of the build and of each project, and every test file's own seconds */
const projectSeconds = [];
const fileSeconds = [];
const since = (startMs) => (Date.now() - startMs) / 1000;

function timings() {
  if (projectSeconds.length === 0) return;
  console.log("\ntest: where the time went (wall seconds)");
  for (const [name, seconds] of projectSeconds) console.log(`  ${name.padEnd(12)} ${seconds.toFixed(0).padStart(6)}`);
  console.log("test: the ten slowest test files (seconds from their first test's start to their last's end)");
  for (const [name, seconds] of fileSeconds.sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`  ${seconds.toFixed(0).padStart(6)}  ${name}`);
}

function finish() {
  timings();
  console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
  process.exit(failed > 0 || passed === 0 ? 1 : 0);
}

if (process.env.CHURNSCOPE_SKIP_BUILD !== "1") {
  console.log("test: next build, then the replay's object store");
  const buildStartMs = Date.now();
  // As `npm run build`: the app, then the replay's object store beside it.
  const build = spawnSync(bin("next"), ["build"], { stdio: "inherit", env });
  const replayStore = build.status === 0 ? spawnSync(bin("tsx"), ["lib/cli/replay-store.ts"], { stdio: "inherit", env }) : build;
  projectSeconds.push(["build", since(buildStartMs)]);
  if (build.status !== 0 || replayStore.status !== 0) {
    console.error("test: the build failed, so integration and e2e tests cannot run");
    failed += 1;
    finish();
  }
}

for (const project of ["unit", "integration", "e2e"]) {
  const output = join(results, `${project}.json`);
  rmSync(output, { force: true });
  console.log(`\ntest: ${project}`);
  const projectStartMs = Date.now();
  const run = spawnSync(bin("vitest"), ["run", "--project", project, "--reporter=default", "--reporter=json", `--outputFile.json=${output}`], {
    stdio: "inherit",
    env,
  });
  if (!existsSync(output)) {
    console.error(`test: ${project} produced no report (exit ${run.status}); counting it as one failure`);
    failed += 1;
    continue;
  }
  projectSeconds.push([project, since(projectStartMs)]);
  const report = JSON.parse(readFileSync(output, "utf8"));
  for (const file of report.testResults ?? [])
    if (file.startTime && file.endTime) fileSeconds.push([relative(root, file.name), (file.endTime - file.startTime) / 1000]);
  passed += report.numPassedTests;
  failed += report.numFailedTests;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  // A suite that failed to load has no failed tests but must still fail the run.
  if (run.status !== 0 && report.numFailedTests === 0) {
    console.error(`test: ${project} exited ${run.status} (a suite failed to load); counting it as one failure`);
    failed += 1;
  }
}
finish();
