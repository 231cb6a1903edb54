/**
 * A real Prometheus holding generated series: written as OpenMetrics, backfilled with promtool,
 * then served by Debian's prometheus on a free loopback port. Backfill happens before start so the
 * blocks are queryable at once. Used by the replay build and the tests.
 */
import { spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { once } from "node:events";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CounterSeries } from "../scenario/counters";
import { openMetricsChunks } from "../scenario/openmetrics";
import { freePort, requireBinary, start, waitForHttp, type Running } from "./processes";

const HINT = "install Debian's package: apt-get install -y prometheus (it provides prometheus and promtool)";

export interface BackfilledPrometheus {
  url: string;
  stop: () => Promise<void>;
}

export async function writeOpenMetrics(series: CounterSeries[], path: string): Promise<void> {
  const out = createWriteStream(path);
  for (const chunk of openMetricsChunks(series)) if (!out.write(chunk)) await once(out, "drain");
  out.end();
  await once(out, "finish");
}

export async function startBackfilledPrometheus(series: CounterSeries[]): Promise<BackfilledPrometheus> {
  const promtool = requireBinary("promtool", HINT);
  const dir = mkdtempSync(join(tmpdir(), "churnscope-prom-"));
  try {
    const omPath = join(dir, "scenario.om");
    await writeOpenMetrics(series, omPath);
    const backfill = spawnSync(promtool, ["tsdb", "create-blocks-from", "openmetrics", "-q", omPath, join(dir, "data")], {
      encoding: "utf8",
      maxBuffer: 64 << 20,
    });
    if (backfill.status !== 0) throw new Error(`promtool backfill failed:\n${backfill.stderr}${backfill.stdout}`);
    rmSync(omPath);
  } catch (error) {
    rmSync(dir, { recursive: true, force: true });
    throw error;
  }
  return servePrometheus(dir, "global:\n  scrape_interval: 15s\nscrape_configs: []\n", ["--storage.tsdb.retention.time=3650d"]);
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
): Promise<BackfilledPrometheus & { output: () => string }> {
  const prometheus = requireBinary("prometheus", HINT);
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
