/**
 * A real Prometheus holding generated series: written as OpenMetrics, backfilled with promtool,
 * then served by Debian's prometheus on a free loopback port. Backfill happens before start so the
 * blocks are queryable at once. Used by the replay build and the tests.
 */
import { createWriteStream, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import type { CounterSeries } from "../scenario/counters";
import { openMetricsChunks, type SampleWindow } from "../scenario/openmetrics";
import { freePort, requireBinary, start, waitForHttp, type Running } from "./processes";

const HINT = "install Debian's package: apt-get install -y prometheus (it provides prometheus and promtool)";

export interface BackfilledPrometheus {
  url: string;
  stop: () => Promise<void>;
}

async function writeOpenMetrics(series: CounterSeries[], path: string, window?: SampleWindow): Promise<void> {
  const out = createWriteStream(path);
  for (const chunk of openMetricsChunks(series, window)) if (!out.write(chunk)) await once(out, "drain");
  out.end();
  await once(out, "finish");
}

/**
 * promtool's block span. It reads its whole input once for each block it makes, so the replay's four days as one file
 * were read 51 times (92 s here): each block's window goes in a file of its own instead, read once.
 */
const BLOCK_SECONDS = 2 * 3600;

/** The start of each block window that holds a sample of `series`, aligned as promtool aligns its blocks. */
function blockWindows(series: CounterSeries[]): number[] {
  const starts = new Set<number>();
  for (const s of series)
    for (let i = 0; i < s.values.length; i++) starts.add(Math.floor((s.startSeconds + i * s.intervalSeconds) / BLOCK_SECONDS) * BLOCK_SECONDS);
  return [...starts].sort((a, b) => a - b);
}

/** `series` backfilled by promtool into `dir`/data, as the blocks a Prometheus serves: a block per window, the windows spread over the cores. */
export async function backfillBlocks(series: CounterSeries[], dir: string): Promise<void> {
  const promtool = requireBinary("promtool", HINT);
  const data = join(dir, "data");
  mkdirSync(data, { recursive: true });
  const windows = blockWindows(series);
  let next = 0;
  const worker = async () => {
    for (let fromSeconds = windows[next++]; fromSeconds !== undefined; fromSeconds = windows[next++]) {
      const input = join(dir, `window-${fromSeconds}.om`);
      const out = join(dir, `window-${fromSeconds}`);
      await writeOpenMetrics(series, input, { fromSeconds, toSeconds: fromSeconds + BLOCK_SECONDS });
      const run = start(promtool, ["tsdb", "create-blocks-from", "openmetrics", "-q", input, out]);
      const [code] = (await once(run.child, "exit")) as [number | null];
      if (code !== 0) {
        // The other workers take no further window: the caller removes the directory they write in.
        next = windows.length;
        throw new Error(`promtool backfill failed:\n${run.output()}`);
      }
      rmSync(input);
      for (const block of readdirSync(out)) renameSync(join(out, block), join(data, block));
      rmSync(out, { recursive: true, force: true });
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(availableParallelism(), windows.length)) }, worker));
}

/** A Prometheus's configuration with no scrapes; `externalLabels` name it among replicas (as Thanos' sidecar needs). */
export const backfilledConfig = (externalLabels: Record<string, string> = {}) =>
  `global:\n  scrape_interval: 15s\n  external_labels: ${JSON.stringify(externalLabels)}\nscrape_configs: []\n`;
export const BACKFILLED_FLAGS = ["--storage.tsdb.retention.time=3650d"];

/** `series` backfilled and served by Debian's prometheus, or by `binary` (the tests' Prometheus 3). */
export async function startBackfilledPrometheus(series: CounterSeries[], binary?: string): Promise<BackfilledPrometheus> {
  const dir = mkdtempSync(join(tmpdir(), "churnscope-prom-"));
  try {
    await backfillBlocks(series, dir);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return servePrometheus(dir, backfilledConfig(), BACKFILLED_FLAGS, undefined, binary);
}

/**
 * Debian's prometheus serving `dir` (its data in dir/data) with `config` on a free loopback port, or
 * `port`; `stop` ends it and removes `dir`.
 */
export async function servePrometheus(
  dir: string,
  config: string,
  flags: string[] = [],
  port?: number,
  /** another Prometheus than the one on the PATH (the tests' Prometheus 3) */
  binary?: string,
): Promise<BackfilledPrometheus & { output: () => string }> {
  const prometheus = binary ?? requireBinary("prometheus", HINT);
  writeFileSync(join(dir, "prometheus.yml"), config);
  const listen = port ?? (await freePort());
  const running: Running = start(prometheus, [
    `--config.file=${join(dir, "prometheus.yml")}`,
    `--storage.tsdb.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${listen}`,
    "--log.level=warn",
    ...flags,
  ]);
  const url = `http://127.0.0.1:${listen}`;
  const stop = async () => {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForHttp(`${url}/-/ready`, running, 60_000);
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop, output: running.output };
}
