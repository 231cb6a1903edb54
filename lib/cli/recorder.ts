/**
 * `npm run recorder`: records the configured clusters (or the kubeconfig's current context) into
 * the store under the data dir, and serves its own metrics at /metrics. Runs until stopped.
 */
import { createServer } from "node:http";
import { mkdirSync } from "node:fs";
import { loadConfig, type AppConfig } from "../config/load";
import { clustersToRecord, recorderMetrics, startRecorder, type RecordedCluster } from "../recorder/recorder";
import { describeStoreTarget, liveStoreTarget } from "../store/sources";
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
async function main(): Promise<void> {
  mkdirSync(config.dataDir, { recursive: true });
  const target = liveStoreTarget(config);
  const store = await WriteStore.open(target);
  const recorder = startRecorder(config, store, clusters);
  console.log(
    `recorder: recording ${clusters.map((c) => c.name).join(", ")} with profiles ${config.profiles.map((p) => p.name).join(", ")} into ${describeStoreTarget(target)}`,
  );

  const metrics = createServer((req, res) => {
    if (req.url === "/metrics") {
      recorderMetrics(recorder, store).then(
        (out) => res.writeHead(200, { "Content-Type": "text/plain; version=0.0.4" }).end(out.text()),
        (error: Error) => res.writeHead(503).end(`the store: ${error.message}\n`),
      );
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
    await store.close();
    process.exit(0);
  }
  process.on("SIGTERM", () => void shutdown());
  process.on("SIGINT", () => void shutdown());
}

main().catch((error: Error) => {
  console.error(`recorder: ${error.message}`);
  process.exit(1);
});
