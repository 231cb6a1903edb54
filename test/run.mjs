#!/usr/bin/env node
/**
 * `npm test`: builds the app (integration and e2e tests run `npm start` against it) while the unit tests run, then
 * runs the integration and e2e projects one after another (each two files at a time), prints where the time
 * went (each project's wall time and the ten slowest test files), and ends with the line CI reads:
 * "N passed, N failed".
 */
import { Buffer } from "node:buffer";
import { spawn } from "node:child_process";
import { chmodSync, closeSync, existsSync, mkdirSync, mkdtempSync, openSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";

const root = process.cwd();
const results = join(root, "test-results");
mkdirSync(results, { recursive: true });
// Every temporary file the tests and the servers they start make goes under one directory, removed at the end: a run
// leaves nothing behind (tests that stop early, and the servers' own files, would leave gigabytes over many runs).
const runTmp = mkdtempSync(join(tmpdir(), "churnscope-test-run-"));
// As /tmp's own: the servers the tests start as other users (PostgreSQL as `postgres`, when run as root) make theirs in it.
chmodSync(runTmp, 0o1777);
const env = { ...process.env, TMPDIR: runTmp, NEXT_TELEMETRY_DISABLED: "1", VITE_CONFIG_NATIVE_IGNORE_WARNING: "true" };
const bin = (name) => join(root, "node_modules", ".bin", name);

let passed = 0;
let failed = 0;
let skipped = 0;
/** wall seconds of the build and of each project, and every test file's own seconds */
const projectSeconds = [];
const fileSeconds = [];
/** every failed test's file, name and first line of its failure, repeated at the end where CI's tail shows it */
const failures = [];
const since = (startMs) => (Date.now() - startMs) / 1000;

function timings() {
  if (projectSeconds.length === 0) return;
  console.log("\ntest: where the time went (wall seconds)");
  for (const [name, seconds] of projectSeconds) console.log(`  ${name.padEnd(12)} ${seconds.toFixed(0).padStart(6)}`);
  console.log("test: the ten slowest test files (seconds from their first test's start to their last's end)");
  for (const [name, seconds] of fileSeconds.sort((a, b) => b[1] - a[1]).slice(0, 10)) console.log(`  ${seconds.toFixed(0).padStart(6)}  ${name}`);
}

function finish() {
  rmSync(runTmp, { recursive: true, force: true });
  timings();
  if (failures.length > 0) {
    console.log("\ntest: what failed");
    for (const { file, name, message } of failures) console.log(`  ${file}: ${name}\n      ${message}`);
  }
  console.log(`\n${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ""}`);
  process.exit(failed > 0 || passed === 0 ? 1 : 0);
}

const TERMINAL_COLOURS = new RegExp(`${String.fromCharCode(27)}\\[[0-9;]*m`, "g");

/** The first line of a failure message, cut to 2,000 characters (enough for an assertion that says what it found), without terminal colours. */
function firstLine(text) {
  const line =
    String(text ?? "")
      .replace(TERMINAL_COLOURS, "")
      .trim()
      .split("\n")[0] ?? "";
  return line.length > 2000 ? `${line.slice(0, 2000)}…` : line;
}

/** Runs a command to its end with its output shown as it comes, and keeps the last 4 MB of it to quote from. */
function runShown(command, args) {
  const KEEP_BYTES = 4_000_000;
  // The chunks themselves, the oldest dropped past the bound: joining them into one text per chunk would copy megabytes each time.
  const chunks = [];
  let kept = 0;
  const keep = (chunk, to) => {
    to.write(chunk);
    chunks.push(chunk);
    kept += chunk.length;
    while (kept > KEEP_BYTES && chunks.length > 1) kept -= chunks.shift().length;
  };
  return new Promise((resolve) => {
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    child.stdout.on("data", (chunk) => keep(chunk, process.stdout));
    child.stderr.on("data", (chunk) => keep(chunk, process.stderr));
    child.on("close", (code) => resolve({ status: code, output: Buffer.concat(chunks).toString("utf8") }));
  });
}

/** What vitest printed under "Unhandled Errors" (an error outside any test fails the run without failing a test), or where to look. */
function unhandledErrors(output) {
  const lines = output.replace(TERMINAL_COLOURS, "").split("\n");
  const start = lines.findIndex((line) => /Unhandled (Errors?|Rejection)/.test(line));
  if (start < 0) return "no unhandled error printed (see the output above)";
  return lines
    .slice(start, start + 25)
    .filter((line) => line.trim() !== "")
    .join("\n      ");
}

/** Runs a command to its end with its output appended to the file `logPath`. */
function runLogged(command, args, logPath, extraEnv = {}) {
  const fd = openSync(logPath, "a");
  return new Promise((resolve) => {
    const child = spawn(command, args, { env: { ...env, ...extraEnv }, stdio: ["ignore", fd, fd] });
    child.on("close", (code) => {
      closeSync(fd);
      resolve(code);
    });
  });
}

// The build runs beside the unit tests, which do not need it: each takes the cores the other leaves idle.
const skipBuild = process.env.CHURNSCOPE_SKIP_BUILD === "1";
const buildLog = join(results, "build.log");
let build;
if (!skipBuild) {
  console.log("test: next build, then the replay's object store, beside the unit tests (its output: test-results/build.log)");
  rmSync(buildLog, { force: true });
  const buildStartMs = Date.now();
  // As the Dockerfile builds it: `npm run build` (the app, then the replay's object store beside it) with Next's
  // standalone output as well, which the image's test runs; `npm start` runs the same build as any other.
  const standalone = { CHURNSCOPE_STANDALONE: "1" };
  build = runLogged(bin("next"), ["build"], buildLog, standalone)
    .then((code) => (code === 0 ? runLogged(bin("tsx"), ["lib/cli/replay-store.ts"], buildLog, standalone) : code))
    .then((code) => ({ ok: code === 0, seconds: since(buildStartMs) }));
}

for (const project of ["unit", "integration", "e2e"]) {
  if (project === "integration" && build) {
    // Integration and e2e tests run `npm start` against the build.
    const built = await build;
    projectSeconds.unshift(["build", built.seconds]);
    const log = readFileSync(buildLog, "utf8");
    process.stdout.write(built.ok ? `test: built (last lines of test-results/build.log)\n${log.trimEnd().split("\n").slice(-3).join("\n")}\n` : log);
    if (!built.ok) {
      console.error("test: the build failed (its output above), so integration and e2e tests cannot run");
      failed += 1;
      finish();
    }
  }
  const output = join(results, `${project}.json`);
  rmSync(output, { force: true });
  console.log(`\ntest: ${project}`);
  const projectStartMs = Date.now();
  const run = await runShown(bin("vitest"), ["run", "--project", project, "--reporter=default", "--reporter=json", `--outputFile.json=${output}`]);
  if (!existsSync(output)) {
    console.error(`test: ${project} produced no report (exit ${run.status}); counting it as one failure`);
    failed += 1;
    continue;
  }
  projectSeconds.push([project, since(projectStartMs)]);
  const report = JSON.parse(readFileSync(output, "utf8"));
  // A file that failed to load, or whose hook outside its tests failed (a server's stop timing out), fails no test
  // but fails the run: each counts as one failure, named with its reason.
  let failedFiles = 0;
  for (const file of report.testResults ?? []) {
    const name = relative(root, file.name);
    const tests = file.assertionResults ?? [];
    if (file.startTime && file.endTime) fileSeconds.push([name, (file.endTime - file.startTime) / 1000]);
    for (const test of tests)
      if (test.status === "failed") failures.push({ file: name, name: test.fullName ?? test.title, message: firstLine(test.failureMessages?.[0]) });
    if (file.status === "failed" && !tests.some((test) => test.status === "failed")) {
      failures.push({
        file: name,
        name: tests.length === 0 ? "(the file failed to load)" : "(a hook outside its tests failed)",
        message: firstLine(file.message),
      });
      failedFiles += 1;
    }
  }
  passed += report.numPassedTests;
  failed += report.numFailedTests + failedFiles;
  skipped += (report.numPendingTests ?? 0) + (report.numTodoTests ?? 0);
  // An error outside any test and any file fails no test but must still fail the run.
  if (run.status !== 0 && report.numFailedTests === 0 && failedFiles === 0) {
    console.error(`test: ${project} exited ${run.status} with no failed test; counting it as one failure`);
    failures.push({ file: project, name: `vitest exited ${run.status} with no failed test`, message: unhandledErrors(run.output) });
    failed += 1;
  }
}
finish();
