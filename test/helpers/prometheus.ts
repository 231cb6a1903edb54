/** Real Prometheus servers for tests: backfilled with a scenario's series (see lib/cli/backfilled-prometheus.ts), or scraping a real API server. */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CounterSeries } from "@/lib/scenario/counters";
import { freePort, requireBinary, start, waitForHttp } from "@/lib/cli/processes";
import { startBackfilledPrometheus, type BackfilledPrometheus } from "@/lib/cli/backfilled-prometheus";

export type TestPrometheus = BackfilledPrometheus;
export { writeOpenMetrics } from "@/lib/cli/backfilled-prometheus";

export function startPrometheus(series: CounterSeries[]): Promise<TestPrometheus> {
  return startBackfilledPrometheus(series);
}

/** A real Prometheus scraping an API server's /metrics over HTTPS with a bearer token, every `intervalSeconds`. */
export async function startScrapingPrometheus(target: { job: string; url: string; token: string }, { port, intervalSeconds = 1 }: { port?: number; intervalSeconds?: number } = {}): Promise<TestPrometheus> {
  const prometheus = requireBinary("prometheus", "install Debian's package: apt-get install -y prometheus");
  const dir = mkdtempSync(join(tmpdir(), "churnscope-prom-scrape-"));
  const { host } = new URL(target.url);
  const config = {
    global: { scrape_interval: `${intervalSeconds}s`, scrape_timeout: `${intervalSeconds}s` },
    scrape_configs: [{ job_name: target.job, scheme: "https", tls_config: { insecure_skip_verify: true }, authorization: { credentials: target.token }, static_configs: [{ targets: [host] }] }],
  };
  writeFileSync(join(dir, "prometheus.yml"), JSON.stringify(config));
  const listen = port ?? (await freePort());
  const running = start(prometheus, [`--config.file=${join(dir, "prometheus.yml")}`, `--storage.tsdb.path=${join(dir, "data")}`, `--web.listen-address=127.0.0.1:${listen}`, "--log.level=warn"]);
  const url = `http://127.0.0.1:${listen}`;
  const stop = async () => {
    await running.stop();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await waitForHttp(`${url}/-/ready`, running, 60_000);
    // Ready is not yet scraping (targets are applied a few seconds after start): wait for two scrapes.
    const deadline = Date.now() + 60_000;
    const scrapes = async () => {
      const res = await fetch(`${url}/api/v1/query?${new URLSearchParams({ query: `count_over_time(up{job="${target.job}"}[1m])` })}`);
      return Number((await res.json()).data?.result?.[0]?.value?.[1] ?? 0);
    };
    while ((await scrapes()) < 2) {
      if (Date.now() > deadline) throw new Error(`Prometheus did not scrape ${target.url} within 60 s:\n${running.output()}`);
      await new Promise((r) => setTimeout(r, 250));
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { url, stop };
}
