/**
 * A real Prometheus for tests: the scenario is written as OpenMetrics, backfilled with promtool,
 * and served by Debian's prometheus on a free loopback port. Backfill happens before start so the
 * blocks are queryable at once (stack.md G18 f).
 */
import { spawnSync } from "node:child_process";
import { createWriteStream, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { once } from "node:events";
import type { CounterSeries } from "@/lib/scenario/counters";
import { openMetricsChunks } from "@/lib/scenario/openmetrics";
import { freePort, requireBinary, start, waitForHttp, type Running } from "./processes";

const HINT = "install Debian's package: apt-get install -y prometheus (it provides prometheus and promtool)";

export interface TestPrometheus {
  url: string;
  stop: () => Promise<void>;
}

export async function writeOpenMetrics(series: CounterSeries[], path: string): Promise<void> {
  const out = createWriteStream(path);
  for (const chunk of openMetricsChunks(series)) if (!out.write(chunk)) await once(out, "drain");
  out.end();
  await once(out, "finish");
}

export async function startPrometheus(series: CounterSeries[]): Promise<TestPrometheus> {
  const promtool = requireBinary("promtool", HINT);
  const prometheus = requireBinary("prometheus", HINT);
  const dir = mkdtempSync(join(tmpdir(), "churnscope-prom-"));
  const omPath = join(dir, "scenario.om");
  await writeOpenMetrics(series, omPath);
  const backfill = spawnSync(promtool, ["tsdb", "create-blocks-from", "openmetrics", "-q", omPath, join(dir, "data")], { encoding: "utf8" });
  if (backfill.status !== 0) throw new Error(`promtool backfill failed:\n${backfill.stderr}${backfill.stdout}`);
  writeFileSync(join(dir, "prometheus.yml"), "global:\n  scrape_interval: 15s\nscrape_configs: []\n");
  const port = await freePort();
  const running: Running = start(prometheus, [
    `--config.file=${join(dir, "prometheus.yml")}`,
    `--storage.tsdb.path=${join(dir, "data")}`,
    `--web.listen-address=127.0.0.1:${port}`,
    "--storage.tsdb.retention.time=3650d",
    "--log.level=warn",
  ]);
  const url = `http://127.0.0.1:${port}`;
  try {
    await waitForHttp(`${url}/-/ready`, running, 30_000);
  } catch (error) {
    await running.stop();
    throw error;
  }
  return {
    url,
    stop: async () => {
      await running.stop();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
