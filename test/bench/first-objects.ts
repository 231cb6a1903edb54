/**
 * The README tour's step 3 on a fresh start: a new data directory, `npm start`, the tour's first page (Write
 * load on the replay, timed apart: a fresh server's first render), then the first visit to Objects (the page,
 * then the ranking it asks for), in ms, the worst of ROUNDS. As shipped, the replay's object
 * store comes from the build (`npm run build` makes it) and is copied into the data directory on that
 * visit. The peer, in the same run: the same visit where that store must be built on first use (a config
 * with one more profile, so the build's store does not fit), as every first visit did before. PAUSE_MS (default 0):
 * how long the visitor takes to open the page once the server is ready (reading its address from the log, say).
 * Run: npm run build && npx tsx test/bench/first-objects.ts
 */
import { startApp, writeConfig } from "../helpers/app";
import { report, round, timed } from "./report";

const RANGE = "snapshot=replay&from=1788912000000&to=1789279200000";
const ROUNDS = Number(process.env.ROUNDS ?? 3);
const PAUSE_MS = Number(process.env.PAUSE_MS ?? 0);
const EXTRA_PROFILE = `profiles:
  - name: bench-extra
    group: example.com
    version: v1
    resource: widgets
    kind: Widget
    routed: { state: { path: "$.status.state" } }
`;

async function firstVisit(config: string): Promise<{ tourStartMs: number; pageMs: number; rankingMs: number }> {
  const app = await startApp({ CHURNSCOPE_CONFIG: writeConfig(config) });
  try {
    await new Promise((resolve) => setTimeout(resolve, PAUSE_MS));
    // The tour's steps 1 and 2: the Write load page on the replay (the first page a fresh server renders).
    const tourStart = await timed(async () => (await fetch(`${app.url}/?${RANGE}&resource=connectors.networking.datumapis.com`)).text());
    const page = await timed(async () => (await fetch(`${app.url}/objects?${RANGE}&resource=connectors.networking.datumapis.com`)).text());
    const ranking = await timed(async () => {
      const res = await fetch(`${app.url}/api/objects?${RANGE}&kind=Connector`);
      if (res.status !== 200) throw new Error(`objects answered ${res.status}: ${await res.text()}`);
      return res.json();
    });
    return { tourStartMs: tourStart.ms, pageMs: page.ms, rankingMs: ranking.ms };
  } finally {
    await app.stop();
  }
}

async function main() {
  const shipped: Awaited<ReturnType<typeof firstVisit>>[] = [];
  const peer: Awaited<ReturnType<typeof firstVisit>>[] = [];
  for (let i = 0; i < ROUNDS; i++) {
    shipped.push(await firstVisit("{}\n"));
    peer.push(await firstVisit(EXTRA_PROFILE));
  }
  const worst = (runs: typeof shipped) => ({
    tourStartMs: round(Math.max(...runs.map((r) => r.tourStartMs)), 0),
    pageMs: round(Math.max(...runs.map((r) => r.pageMs)), 0),
    rankingMs: round(Math.max(...runs.map((r) => r.rankingMs)), 0),
    visitMs: round(Math.max(...runs.map((r) => r.pageMs + r.rankingMs)), 0),
  });
  report({
    bench: "first-objects-visit",
    rounds: ROUNDS,
    pauseMs: PAUSE_MS,
    shipped: worst(shipped),
    peer: { what: "the replay's object store built on first use", ...worst(peer) },
    target: "first visit (page + ranking) ≤ 1000 ms on a fresh start",
  });
}

void main();
