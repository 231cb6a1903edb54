/**
 * Thanos as teams run it for HA Prometheus: two Prometheus replicas holding the same series (one promtool backfill,
 * its blocks copied, `replica` a and b as their external labels), a Thanos sidecar beside each, and one Thanos Query
 * over both that deduplicates on `replica`. Thanos is built by test/tools/build.sh. The querier's URL is what the
 * dashboard is pointed at; an answer that counted both replicas would be twice the ground truth.
 */
import { cpSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { backfillBlocks, backfilledConfig, BACKFILLED_FLAGS, servePrometheus } from "@/lib/cli/backfilled-prometheus";
import { freePort, start, waitForHttp, type Running } from "@/lib/cli/processes";
import type { CounterSeries } from "@/lib/scenario/counters";
import type { TestPrometheus } from "./prometheus";
import { toolBinary } from "./tools";

const REPLICAS = ["a", "b"];

export async function startThanos(series: CounterSeries[]): Promise<TestPrometheus> {
  const bin = toolBinary("thanos");
  const backfilled = mkdtempSync(join(tmpdir(), "churnscope-thanos-"));
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const s of stops.reverse()) await s();
    rmSync(backfilled, { recursive: true, force: true });
  };
  try {
    await backfillBlocks(series, backfilled);
    const endpoints: string[] = [];
    const sidecars: Running[] = [];
    for (const replica of REPLICAS) {
      const dir = mkdtempSync(join(tmpdir(), `churnscope-thanos-${replica}-`));
      cpSync(join(backfilled, "data"), join(dir, "data"), { recursive: true });
      const prometheus = await servePrometheus(dir, backfilledConfig({ replica }), BACKFILLED_FLAGS);
      stops.push(prometheus.stop);
      const [grpc, http] = [await freePort(), await freePort()];
      const sidecar = start(bin, [
        "sidecar",
        `--prometheus.url=${prometheus.url}`,
        `--tsdb.path=${join(dir, "data")}`,
        `--grpc-address=127.0.0.1:${grpc}`,
        `--http-address=127.0.0.1:${http}`,
        "--log.level=warn",
      ]);
      stops.push(sidecar.stop);
      sidecars.push(sidecar);
      await waitForHttp(`http://127.0.0.1:${http}/-/ready`, sidecar, 60_000);
      endpoints.push(`127.0.0.1:${grpc}`);
    }
    const [http, grpc] = [await freePort(), await freePort()];
    const query = start(bin, [
      "query",
      `--http-address=127.0.0.1:${http}`,
      `--grpc-address=127.0.0.1:${grpc}`,
      ...endpoints.map((e) => `--endpoint=${e}`),
      "--query.replica-label=replica",
      "--log.level=warn",
    ]);
    stops.push(query.stop);
    const url = `http://127.0.0.1:${http}`;
    await waitForHttp(`${url}/-/ready`, query, 60_000);
    await waitForEndpoints(url, endpoints.length, [query, ...sidecars]);
    return { url, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Until the querier has found every sidecar (it dials them after it starts). */
async function waitForEndpoints(url: string, count: number, logs: Running[]): Promise<void> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const answer = await fetch(`${url}/api/v1/stores`)
      .then((r) => r.json() as Promise<{ data?: Record<string, { lastError?: string | null }[]> }>)
      .catch(() => ({ data: {} }));
    const stores = Object.values(answer.data ?? {}).flat() as { lastError?: string | null }[];
    const healthy = stores.filter((s) => !s.lastError).length;
    if (healthy >= count) return;
    if (Date.now() > deadline)
      throw new Error(`Thanos Query found ${healthy} of ${count} sidecars within 60 s:\n${logs.map((l) => l.output().slice(-2000)).join("\n")}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}
