/**
 * `npm run replay:build`: generator → promtool backfill → a real Prometheus → the dashboard's own
 * panel code → the committed replay snapshot. `-- --check` rebuilds and fails if the committed
 * bundle differs (it is byte-stable for a given seed).
 */
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { gunzipSync } from "node:zlib";
import { callRunner } from "../server/handlers/panels";
import { detectRebuildProfile } from "../rebuilds/detect";
import { HUB_JOB } from "../demo/types";
import { createPromClient } from "../prometheus/client";
import { replayAuditRequests, replayObjectWrites } from "../demo/bundle";
import { replaySeries } from "../demo/metrics";
import { DEFAULT_REPLAY } from "../demo/params";
import { generateReplay } from "../demo/replay";
import { REPLAY_APISERVERS, REPLAY_INITIAL_VIEW, REPLAY_DESCRIPTION, REPLAY_TITLE, replayCalls, replayRanges } from "../demo/replay-views";
import { buildSnapshot } from "../snapshot/export";
import { encodeSnapshot } from "../snapshot/format/codec";
import { REPLAY_BUNDLE_PATH } from "../snapshot/store";
import { startBackfilledPrometheus } from "./backfilled-prometheus";

const check = process.argv.includes("--check");
const t0 = Date.now();
const log = (message: string) => console.log(`replay:build ${((Date.now() - t0) / 1000).toFixed(1)}s ${message}`);

async function main(): Promise<void> {
  const params = DEFAULT_REPLAY;
  const replay = generateReplay(params);
  log(`simulated ${replay.sink.writes.length} object writes, ${replay.sink.requests.length} requests, ${replay.sink.rebuilds.length} rebuilds`);
  const series = replaySeries(replay);
  log(`${series.length} series; backfilling with promtool (about ten seconds)`);
  const prometheus = await startBackfilledPrometheus(series);
  try {
    log(`Prometheus ready at ${prometheus.url}; running the panels`);
    const client = createPromClient({ url: prometheus.url, headers: {}, timeoutMs: 120_000, partialResponse: false });
    const snapshot = await buildSnapshot(
      {
        title: REPLAY_TITLE,
        description: REPLAY_DESCRIPTION,
        source: "replay",
        // Fixed, so the bundle is byte-stable: the replay is "taken" at the end of its window.
        takenAtMs: params.endMs,
        ranges: replayRanges(params),
        initialView: REPLAY_INITIAL_VIEW(params),
        apiservers: REPLAY_APISERVERS,
        views: ["write-load", "rebuilds", "compare"],
        siteLabel: "cluster",
        calls: replayCalls(params),
        markers: params.markers,
        objectWrites: replayObjectWrites(replay),
        auditRequests: replayAuditRequests(replay),
      },
      callRunner(
        { client, scrapeIntervalSeconds: params.scrapeIntervalSeconds },
        {
          client,
          scrapeIntervalSeconds: params.scrapeIntervalSeconds,
          detect: (bounds) => detectRebuildProfile(client, bounds, "auto"),
          siteLabel: "cluster",
          hubJobs: [HUB_JOB],
          upstream: { resource: "connectors", group: "networking.datumapis.com" },
        },
      ),
    );
    const bytes = encodeSnapshot(snapshot);
    log(
      `${snapshot.panels.length} panel results, ${snapshot.objectWrites?.writes.length} object writes, ${snapshot.auditRequests?.requests.length} audit requests, ${(bytes.length / 1_048_576).toFixed(2)} MiB`,
    );
    if (check) {
      // Compared unpacked, so a different zlib build cannot fail the check.
      const same = existsSync(REPLAY_BUNDLE_PATH) && gunzipSync(readFileSync(REPLAY_BUNDLE_PATH)).equals(gunzipSync(bytes));
      log(same ? `${REPLAY_BUNDLE_PATH} is up to date` : `${REPLAY_BUNDLE_PATH} differs from a fresh build: run npm run replay:build and commit it`);
      process.exitCode = same ? 0 : 1;
    } else {
      writeFileSync(REPLAY_BUNDLE_PATH, bytes);
      log(`wrote ${REPLAY_BUNDLE_PATH}`);
    }
  } finally {
    await prometheus.stop();
  }
}

main().catch((error) => {
  console.error(`replay:build failed: ${error instanceof Error ? error.message : error}`);
  process.exit(1);
});
