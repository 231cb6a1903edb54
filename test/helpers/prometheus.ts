/** Real Prometheus servers for tests: backfilled with a scenario's series (see lib/cli/backfilled-prometheus.ts), or scraping a real API server. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { CounterSeries } from "@/lib/scenario/counters";
import { servePrometheus, startBackfilledPrometheus, type BackfilledPrometheus } from "@/lib/cli/backfilled-prometheus";
import { toolBinary } from "./tools";

export type TestPrometheus = BackfilledPrometheus;

export function startPrometheus(series: CounterSeries[]): Promise<TestPrometheus> {
  return startBackfilledPrometheus(series);
}

/**
 * Prometheus 3 (built by test/tools/build.sh), serving the blocks Debian's promtool backfilled: the engine most
 * clusters run now, which reads a window as (t−w, t].
 */
export function startPrometheus3(series: CounterSeries[]): Promise<TestPrometheus> {
  return startBackfilledPrometheus(series, toolBinary("prometheus-3"));
}

/** A target Prometheus scrapes: https with a bearer token (an API server), or plain http (a component's metrics). */
export interface ScrapeTarget {
  job: string;
  url: string;
  token?: string;
}

/** A real Prometheus scraping each target's /metrics every `intervalSeconds`; resolves once it has scraped the first twice. */
export async function startScrapingPrometheus(
  targets: ScrapeTarget | ScrapeTarget[],
  { port, intervalSeconds = 1 }: { port?: number; intervalSeconds?: number } = {},
): Promise<TestPrometheus> {
  const list = Array.isArray(targets) ? targets : [targets];
  const config = {
    global: { scrape_interval: `${intervalSeconds}s`, scrape_timeout: `${intervalSeconds}s` },
    scrape_configs: list.map((target) => {
      const { host, protocol } = new URL(target.url);
      return {
        job_name: target.job,
        scheme: protocol.slice(0, -1),
        ...(protocol === "https:" ? { tls_config: { insecure_skip_verify: true } } : {}),
        ...(target.token ? { authorization: { credentials: target.token } } : {}),
        static_configs: [{ targets: [host] }],
      };
    }),
  };
  const prom = await servePrometheus(mkdtempSync(join(tmpdir(), "churnscope-prom-scrape-")), JSON.stringify(config), [], port);
  // Ready is not yet scraping (targets are applied a few seconds after start): wait for two scrapes of the first target.
  const deadline = Date.now() + 60_000;
  const scrapes = async () => {
    const res = await fetch(`${prom.url}/api/v1/query?${new URLSearchParams({ query: `count_over_time(up{job="${list[0].job}"}[1m])` })}`);
    return Number((await res.json()).data?.result?.[0]?.value?.[1] ?? 0);
  };
  while ((await scrapes()) < 2) {
    if (Date.now() > deadline) {
      await prom.stop();
      throw new Error(`Prometheus did not scrape ${list[0].url} within 60 s:\n${prom.output()}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return prom;
}
