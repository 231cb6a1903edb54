/**
 * `npm run recorder`: records the configured clusters (or the kubeconfig's current context) into
 * the store under the data dir, and serves its own metrics at /metrics. Runs until stopped.
 */
import { createServer } from "node:http";
import { mkdirSync } from "node:fs";
import { join } from "node:path";
import { loadConfig, type AppConfig } from "../config/load";
import { clustersToRecord, recorderMetrics, startRecorder, type RecordedCluster } from "../recorder/recorder";
import { WriteStore } from "../store/store";

let config: AppConfig;
let clusters: RecordedCluster[];
try {
  config = loadConfig();
  clusters = clustersToRecord(config);
} catch (error) {
  console.error(`recorder: ${(error as Error).message}`);
  process.exit(1);
}
if (clusters.length === 0) {
  console.error("recorder: nothing to record: list clusters under `clusters:` in the configuration, or set KUBECONFIG (or run in a cluster)");
  process.exit(1);
}
mkdirSync(config.dataDir, { recursive: true });
const store = new WriteStore(join(config.dataDir, "churnscope.sqlite"));
const recorder = startRecorder(config, store, clusters);
console.log(
  `recorder: recording ${clusters.map((c) => c.name).join(", ")} with profiles ${config.profiles.map((p) => p.name).join(", ")} into ${join(config.dataDir, "churnscope.sqlite")}`,
);

const metrics = createServer((req, res) => {
  if (req.url === "/metrics") {
    res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4" }).end(recorderMetrics(recorder, store).text());
  } else if (req.url === "/healthz") {
    res.writeHead(200).end("ok\n");
  } else {
    res.writeHead(404).end("see /metrics\n");
  }
});
metrics.listen(config.recorder.metricsPort, () => console.log(`recorder: metrics on http://0.0.0.0:${config.recorder.metricsPort}/metrics`));

const status = setInterval(() => {
  const rows = recorder.stats();
  console.log(`recorder: ${rows.map((r) => `${r.cluster}/${r.resource} ${r.stats.state} ${r.stats.stored} stored`).join("; ")}`);
}, 60_000);

async function shutdown() {
  clearInterval(status);
  metrics.close();
  await recorder.stop();
  store.close();
  process.exit(0);
}
process.on("SIGTERM", () => void shutdown());
process.on("SIGINT", () => void shutdown());
