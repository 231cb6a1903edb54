/**
 * Many viewers of one alert link, polling one panel: 50 and 200 browsers each asking for the
 * Write load page's largest chart (writes-by-resource, gzip accepted) as fast as answers come, for
 * DURATION_S seconds. Measured: requests per second and p50/p99 latency as a viewer sees it. The peer,
 * in the same run: the same viewers sending the panel's query through a bare pass-through to
 * Prometheus (no encoding, no sharing), the least a server in between costs per request.
 * Run: npm run build && npx tsx test/bench/viewers.ts
 */
import { Agent, request } from "node:http";
import { startApp, writeConfig } from "../helpers/app";
import { startPrometheus } from "../helpers/prometheus";
import { buildWriteLoadScenario, PROJECT_JOB } from "../helpers/write-load-scenario";
import { startPassThrough } from "./pass-through";
import { percentile, report, round } from "./report";

const FROM_MS = Date.parse("2026-09-11T06:00:00Z");
const TO_MS = Date.parse("2026-09-11T18:00:00Z");
const DURATION_S = Number(process.env.DURATION_S ?? 10);

/** One HTTP exchange on kept-alive connections, body read to the end; its time in ms. */
function exchange(agent: Agent, url: URL, method: string, body?: string): Promise<number> {
  const startedMs = performance.now();
  return new Promise((resolve, reject) => {
    const req = request(
      url,
      {
        method,
        agent,
        headers: {
          "accept-encoding": "gzip",
          ...(body ? { "content-type": "application/x-www-form-urlencoded", "content-length": String(Buffer.byteLength(body)) } : {}),
        },
      },
      (res) => {
        res.on("data", () => undefined);
        res.on("end", () => (res.statusCode === 200 ? resolve(performance.now() - startedMs) : reject(new Error(`HTTP ${res.statusCode}`))));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

/** `viewers` loops asking until the time is up; every answer's latency. */
async function storm(viewers: number, ask: (agent: Agent) => Promise<number>): Promise<{ latencies: number[]; seconds: number }> {
  const agent = new Agent({ keepAlive: true, maxSockets: viewers });
  const latencies: number[] = [];
  const startedMs = performance.now();
  const endMs = startedMs + DURATION_S * 1000;
  await Promise.all(
    Array.from({ length: viewers }, async () => {
      while (performance.now() < endMs) latencies.push(await ask(agent));
    }),
  );
  agent.destroy();
  return { latencies, seconds: (performance.now() - startedMs) / 1000 };
}

async function main() {
  const prom = await startPrometheus(buildWriteLoadScenario());
  const passThrough = await startPassThrough(prom.url);
  const app = await startApp({ CHURNSCOPE_CONFIG: writeConfig(`prometheus:\n  url: ${prom.url}\n  scrapeIntervalSeconds: 15\n`) });
  try {
    const panelUrl = new URL(
      `${app.url}/api/panels/writes-by-resource?${new URLSearchParams({ from: String(FROM_MS), to: String(TO_MS), width: "1000", apiserver: PROJECT_JOB })}`,
    );
    const first = await (await fetch(panelUrl)).json();
    const query = new URLSearchParams({
      query: first.data.queries[0].promql,
      start: String(first.data.startMs / 1000),
      end: String(first.data.endMs / 1000),
      step: String(first.data.stepSeconds),
    }).toString();
    const peerUrl = new URL(`${passThrough.url}/api/v1/query_range`);
    for (const viewers of [50, 200]) {
      const ours = await storm(viewers, (agent) => exchange(agent, panelUrl, "GET"));
      const peer = await storm(viewers, (agent) => exchange(agent, peerUrl, "POST", query));
      const figures = (r: { latencies: number[]; seconds: number }) => ({
        requestsPerSecond: round(r.latencies.length / r.seconds, 1),
        p50Ms: round(percentile(r.latencies, 50)),
        p99Ms: round(percentile(r.latencies, 99)),
      });
      report({
        bench: "viewers-polling-one-panel",
        viewers,
        seconds: DURATION_S,
        panel: "writes-by-resource",
        ...figures(ours),
        peer: "the panel's query through a bare pass-through to Prometheus",
        peerFigures: figures(peer),
      });
    }
  } finally {
    await app.stop();
    await new Promise((resolve) => passThrough.server.close(resolve));
    await prom.stop();
  }
}

void main();
