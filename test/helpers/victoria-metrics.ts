/**
 * A real VictoriaMetrics single-node server (built by test/tools/build.sh) holding a scenario's series,
 * imported through its own JSON-lines import API, on a free loopback port: the same series the Prometheus tests
 * backfill, so both engines answer against one ground truth.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePort, start, waitForHttp } from "@/lib/cli/processes";
import type { CounterSeries } from "@/lib/scenario/counters";
import type { TestPrometheus } from "./prometheus";
import { toolBinary } from "./tools";

function binary(): string {
  return toolBinary("victoria-metrics");
}

/** One series as a line of VictoriaMetrics' /api/v1/import format (timestamps in ms). */
function importLine(s: CounterSeries): string {
  const timestamps = Array.from(s.values, (_, i) => (s.startSeconds + i * s.intervalSeconds) * 1000);
  return `${JSON.stringify({ metric: { __name__: s.name, ...s.labels }, values: Array.from(s.values), timestamps })}\n`;
}

export async function startVictoriaMetrics(series: CounterSeries[]): Promise<TestPrometheus> {
  const bin = binary();
  const dir = mkdtempSync(join(tmpdir(), "churnscope-vm-"));
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const running = start(bin, [
    `-storageDataPath=${dir}`,
    `-httpListenAddr=127.0.0.1:${port}`,
    "-retentionPeriod=100y",
    // The scenario's samples are hours old when imported: nothing to hide from queries for being recent.
    "-search.latencyOffset=0s",
    "-search.disableCache",
    "-loggerLevel=ERROR",
  ]);
  const stop = async () => {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForHttp(`${url}/health`, running, 60_000);
    // Sent in parts of about 8 MiB: one request per part, as vmagent would.
    let part = "";
    const send = async () => {
      const res = await fetch(`${url}/api/v1/import`, { method: "POST", body: part });
      if (res.status !== 204) throw new Error(`VictoriaMetrics refused an import: ${res.status} ${await res.text()}`);
      part = "";
    };
    for (const s of series) {
      part += importLine(s);
      if (part.length > 8 << 20) await send();
    }
    if (part) await send();
    // Imported samples become searchable after an in-memory buffer is flushed; this flushes it now.
    const flushed = await fetch(`${url}/internal/force_flush`);
    if (!flushed.ok) throw new Error(`VictoriaMetrics did not flush: ${flushed.status}`);
  } catch (error) {
    await stop();
    throw new Error(`${(error as Error).message}\n${running.output()}`);
  }
  return { url, stop };
}
