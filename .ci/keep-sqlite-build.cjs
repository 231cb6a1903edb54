#!/usr/bin/env node
/**
 * better-sqlite3's prebuilt binary is downloaded from GitHub, which CI's machine cannot reach, so `npm ci` compiles it
 * (about 2 minutes of CPU). This keeps the compiled binary where prebuild-install looks before downloading (npm's cache,
 * `_prebuilds`, named by prebuild-install itself), so the next `npm ci` on this machine unpacks it instead. The
 * name carries the package's version, Node's ABI, platform and architecture, so another build is never taken for it.
 */
const { execFileSync } = require("node:child_process");
const { existsSync, mkdirSync, renameSync } = require("node:fs");
const { dirname, join } = require("node:path");

const packageDir = join(__dirname, "..", "node_modules", "better-sqlite3");
const { version } = require(join(packageDir, "package.json"));
const name = `better-sqlite3-v${version}-node-v${process.versions.modules}-${process.platform}-${process.arch}.tar.gz`;
const url = `https://github.com/WiseLibs/better-sqlite3/releases/download/v${version}/${name}`;
// prebuild-install's own naming of its cache entry for that URL, so the two never disagree.
const cached = require(join(__dirname, "..", "node_modules", "prebuild-install", "util")).cachedPrebuild(url);
const binary = join("build", "Release", "better_sqlite3.node");

if (existsSync(cached)) {
  console.log(`ci: better-sqlite3 ${version}: its build is in npm's cache already`);
} else if (existsSync(join(packageDir, binary))) {
  mkdirSync(dirname(cached), { recursive: true });
  // Written aside and renamed, so that a run stopped halfway leaves no broken archive to be unpacked.
  const partial = `${cached}.${process.pid}.tmp`;
  execFileSync("tar", ["-czf", partial, "-C", packageDir, binary]);
  renameSync(partial, cached);
  console.log(`ci: better-sqlite3 ${version}'s build kept in npm's cache for the next npm ci`);
}
