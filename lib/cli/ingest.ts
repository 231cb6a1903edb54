/**
 * `npm run ingest -- [--cluster NAME] PATH…`: reads audit logs (files or folders, plain or .gz) into
 * the store under the data dir, with a progress line on stderr and a summary of every count at the
 * end. Bad lines are counted and the first ones reported; they never stop the run.
 */
import { mkdirSync, statSync } from "node:fs";
import { auditFiles, ingestFileThreaded, InputError } from "../audit/files";
import { AuditIngester } from "../audit/ingest";
import { loadConfig } from "../config/load";
import { CLUSTER_NAME } from "../config/schema";
import { formatBytes } from "../format/number";
import { describeStoreTarget, liveStoreTarget } from "../store/sources";
import { WriteStore } from "../store/store";

const USAGE = "usage: npm run ingest -- [--cluster NAME] PATH… (audit log files or folders, plain or .gz)";

function parseArgs(argv: string[]): { cluster: string; paths: string[] } {
  let cluster = "default";
  const paths: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i];
    if (arg === "--cluster") cluster = argv[++i] ?? "";
    else if (arg.startsWith("--cluster=")) cluster = arg.slice("--cluster=".length);
    else if (arg === "--help" || arg === "-h") throw new InputError(USAGE);
    else if (arg.startsWith("--")) throw new InputError(`unknown option ${arg}\n${USAGE}`);
    else paths.push(arg);
  }
  if (!CLUSTER_NAME.test(cluster)) throw new InputError(`--cluster: expected a DNS-style name such as prod-eu, got "${cluster}"`);
  if (paths.length === 0) throw new InputError(USAGE);
  return { cluster, paths };
}

async function main() {
  let args: { cluster: string; paths: string[] };
  let files: string[];
  let config;
  try {
    args = parseArgs(process.argv.slice(2));
    files = auditFiles(args.paths);
    config = loadConfig();
  } catch (error) {
    console.error(`ingest: ${(error as Error).message}`);
    process.exit(error instanceof InputError ? 2 : 1);
  }
  if (files.length === 0) {
    console.error(`ingest: no audit log files under ${args.paths.join(", ")} (looked for *.log, *.json, *.jsonl, *.gz)`);
    process.exit(1);
  }
  mkdirSync(config.dataDir, { recursive: true });
  const target = liveStoreTarget(config);
  const store = await WriteStore.open(target);
  const pruned = await store.pruneIfDue(config.recorder.retentionDays * 86_400_000);
  const ingester = new AuditIngester(store, args.cluster, config.profiles);
  ingester.pruned = pruned;
  const totalBytes = files.reduce((sum, f) => sum + statSync(f).size, 0);
  const startedMs = Date.now();
  let doneBytes = 0;
  let lastPrintMs = 0;
  const tty = process.stderr.isTTY;
  const progress = (fileBytes: number, force = false) => {
    const now = Date.now();
    if (!force && now - lastPrintMs < (tty ? 250 : 5_000)) return;
    lastPrintMs = now;
    const read = doneBytes + fileBytes;
    const seconds = Math.max(0.001, (now - startedMs) / 1000);
    const line = `ingest: ${formatBytes(read)} of ${formatBytes(totalBytes)} (${((100 * read) / Math.max(1, totalBytes)).toFixed(0)} %), ${ingester.counts.lines.toLocaleString("en-US")} lines, ${ingester.counts.requests.toLocaleString("en-US")} write requests, ${(read / 1048576 / seconds).toFixed(1)} MiB/s`;
    process.stderr.write(tty ? `\r${line}\u001b[K` : `${line}\n`);
  };
  for (const file of files) {
    await ingestFileThreaded(ingester, file, (bytes) => progress(bytes));
    doneBytes += statSync(file).size;
  }
  progress(0, true);
  if (tty) process.stderr.write("\n");
  await store.close();
  const seconds = (Date.now() - startedMs) / 1000;
  console.log(
    `ingest: ${files.length} file${files.length === 1 ? "" : "s"}, ${formatBytes(totalBytes)} in ${seconds.toFixed(2)} s into ${describeStoreTarget(target)} (cluster ${args.cluster})`,
  );
  console.log(ingester.summary());
  const retention = ingester.retentionWarning(config.recorder.retentionDays * 86_400_000);
  if (retention) console.error(`ingest: ${retention}`);
}

main().catch((error) => {
  console.error(`ingest: ${(error as Error).stack ?? error}`);
  process.exit(1);
});
