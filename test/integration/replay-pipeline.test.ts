/**
 * The replay pipeline end to end on a six-hour cut around the onset: generator → promtool → a real
 * Prometheus → Churnscope. Prometheus's answers for the edge and controller families equal the
 * generator's events, and a view exported as a snapshot re-opens with exactly the live answers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { replaySeries } from "@/lib/demo/metrics";
import { DEFAULT_REPLAY, type ReplayParams } from "@/lib/demo/params";
import { generateReplay, type Replay } from "@/lib/demo/replay";
import { windowTruth } from "@/lib/demo/truth";
import { counterPresets } from "@/lib/compare/catalog";
import { compareRows } from "@/lib/compare/table";
import { HUB_JOB, PROJECT_JOB } from "@/lib/demo/types";
import { writeLoadRequests } from "@/lib/panels/write-load-requests";
import { createPromClient } from "@/lib/prometheus/client";
import type { PromClient } from "@/lib/promql/types";
import { toSeries } from "@/lib/promql/to-series";
import { startApp, writeConfig, type TestApp, uploadSnapshot } from "../helpers/app";
import { startPrometheus, type TestPrometheus } from "../helpers/prometheus";

const at = (iso: string) => Date.parse(iso);
const PARAMS: ReplayParams = {
  ...DEFAULT_REPLAY,
  startMs: at("2026-09-11T10:00:00Z"),
  endMs: at("2026-09-11T16:00:00Z"),
  sites: ["edge-ams1", "edge-sin1"],
  connectors: 30,
  projects: 4,
};
const HOUR = 3_600_000;

let replay: Replay;
let prom: TestPrometheus;
let client: PromClient;
let app: TestApp;

beforeAll(async () => {
  replay = generateReplay(PARAMS);
  prom = await startPrometheus(replaySeries(replay));
  client = createPromClient({ url: prom.url, headers: {}, timeoutMs: 30_000, partialResponse: false });
  app = await startApp({
    CHURNSCOPE_CONFIG: writeConfig(
      `prometheus:\n  url: ${prom.url}\n  scrapeIntervalSeconds: 30\napiservers:\n  project: [${PROJECT_JOB}]\n  hub: [${JSON.stringify(HUB_JOB)}]\nlimits:\n  maxSnapshotMiB: 1\n`,
    ),
  });
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await prom?.stop();
});

async function bySite(promql: string, atMs: number): Promise<Map<string, number>> {
  const result = await client.query(promql, atMs / 1000);
  return new Map(toSeries(result.data).map((s) => [s.labels.cluster ?? s.labels.member_cluster, s.points[0][1] as number]));
}

describe("replay pipeline through a real Prometheus", () => {
  it("rebuilds per hour, exact mean durations and the share over 10 s equal the generator's, per site", async () => {
    const end = at("2026-09-11T15:00:00Z");
    const xds = 'runner="xds", message="xds-ir"';
    const rebuilds = await bySite(`sum by (cluster) (increase(watchable_subscribe_total{${xds}, status="success"}[1h]))`, end);
    const mean = await bySite(
      `sum by (cluster) (increase(watchable_subscribe_duration_seconds_sum{${xds}}[1h])) / sum by (cluster) (increase(watchable_subscribe_duration_seconds_count{${xds}}[1h]))`,
      end,
    );
    const slow = await bySite(
      `1 - sum by (cluster) (increase(watchable_subscribe_duration_seconds_bucket{${xds}, le="10"}[1h])) / sum by (cluster) (increase(watchable_subscribe_duration_seconds_count{${xds}}[1h]))`,
      end,
    );
    const hooks = await bySite(`sum by (cluster) (increase(nso_extension_hook_calls_total[1h]))`, end);
    const propagated = await bySite(`sum by (member_cluster) (increase(update_resource_to_cluster{kind="Connector", operationResult="updated"}[1h]))`, end);
    for (const site of PARAMS.sites) {
      const done = replay.sink.rebuilds.filter((r) => r.site === site && r.startMs + r.durationMs > end - HOUR && r.startMs + r.durationMs <= end);
      expect(done.length).toBeGreaterThan(100);
      expect(rebuilds.get(site)).toBeCloseTo(done.length, 6);
      expect(hooks.get(site)).toBeCloseTo(done.length, 6);
      expect(mean.get(site)).toBeCloseTo(done.reduce((a, r) => a + r.durationMs, 0) / done.length / 1000, 6);
      expect(slow.get(site)).toBeCloseTo(done.filter((r) => r.durationMs > 10_000).length / done.length, 6);
      const updates = replay.sink.propagations.filter(
        (p) => p.site === site && p.kind === "Connector" && p.operationResult === "updated" && p.timeMs > end - HOUR && p.timeMs <= end,
      );
      expect(propagated.get(site)).toBeCloseTo(updates.length, 6);
    }
  });

  it("the seed's reconcile and status-update queries equal the generator's counts", async () => {
    const [w] = windowTruth(replay, 3).filter((x) => x.startMs === at("2026-09-11T12:00:00Z"));
    const end = w.endMs / 1000;
    const reconciles = await client.query(
      'sum(increase(controller_runtime_reconcile_total{cluster="prod-infrastructure-control-plane", controller="connector", result="success"}[3h]))',
      end,
    );
    const updates = await client.query(
      `sum(increase(apiserver_request_total{job="${PROJECT_JOB}", resource="connectors", subresource="status", verb="PUT"}[3h]))`,
      end,
    );
    expect(toSeries(reconciles.data)[0].points[0][1]).toBeCloseTo(w.notReadyReconciles, 6);
    expect(toSeries(updates.data)[0].points[0][1]).toBeCloseTo(w.statusUpdates, 6);
    expect(w.statusUpdates).toBeGreaterThan(100);
  });

  it("a downloaded view re-opens as a snapshot that answers exactly what the live page answered", async () => {
    const state = {
      startMs: at("2026-09-11T12:00:00Z"),
      endMs: at("2026-09-11T16:00:00Z"),
      apiserver: PROJECT_JOB,
      resource: "connectors.networking.datumapis.com",
    };
    const query = `from=${state.startMs}&to=${state.endMs}&apiserver=${state.apiserver}&resource=${state.resource}`;
    const download = await fetch(`${app.url}/api/snapshots/export?${query}`);
    expect(download.status).toBe(200);
    expect(download.headers.get("content-disposition")).toMatch(/attachment; filename="churnscope-write-load-.*\.json\.gz"/);
    const bytes = Buffer.from(await download.arrayBuffer());
    const upload = await uploadSnapshot(app.url, bytes);
    const uploaded = await upload.json();
    expect(upload.status).toBe(200);
    const id = uploaded.data.id as string;
    expect(uploaded.data.ranges).toEqual([{ startMs: state.startMs, endMs: state.endMs }]);

    for (const call of Object.values(writeLoadRequests(state))) {
      if (!call) continue;
      const params = new URLSearchParams({ from: String(call.startMs), to: String(call.endMs), width: "1000" });
      if (call.apiserver) params.set("apiserver", call.apiserver);
      if (call.resource) params.set("resource", call.resource);
      const live = await (await fetch(`${app.url}/api/panels/${call.panel}?${params}`)).json();
      params.set("snapshot", id);
      const frozen = await (await fetch(`${app.url}/api/panels/${call.panel}?${params}`)).json();
      expect(live.status, call.panel).toBe("success");
      expect(frozen, call.panel).toEqual(live);
    }

    // Asking the snapshot for something it does not hold says so.
    const missing = await fetch(
      `${app.url}/api/panels/writes-by-verb?snapshot=${id}&from=${state.startMs}&to=${state.endMs}&apiserver=${PROJECT_JOB}&resource=leases`,
    );
    expect(missing.status).toBe(404);
    expect((await missing.json()).error).toMatch(/holds no writes-by-verb data for leases; it holds: connectors\.networking\.datumapis\.com/);
  });

  it("rejects bad uploads with a message and keeps what was stored", async () => {
    const first = await (await fetch(`${app.url}/api/snapshots/export?from=${at("2026-09-11T14:00:00Z")}&to=${at("2026-09-11T15:00:00Z")}`)).arrayBuffer();
    const stored = await (await uploadSnapshot(app.url, first)).json();
    const cases: [BodyInit, number, RegExp][] = [
      ["not a snapshot", 400, /not JSON/],
      [JSON.stringify({ format: "churnscope-snapshot", version: 99 }), 400, /version 99, made by a newer Churnscope/],
      [Buffer.alloc(2 * 1_048_576, 7), 413, /larger than 1\.0 MiB/],
      ["", 400, /empty|no body/],
    ];
    for (const [body, status, message] of cases) {
      const res = await fetch(`${app.url}/api/snapshots`, { method: "POST", headers: { "content-type": "application/octet-stream" }, body });
      expect(res.status).toBe(status);
      expect((await res.json()).error).toMatch(message);
    }
    const again = await fetch(`${app.url}/api/snapshots/${stored.data.id}`);
    expect(again.status).toBe(200);
    expect((await fetch(`${app.url}/api/snapshots/..%2Fetc`)).status).toBe(400);
    expect((await fetch(`${app.url}/api/snapshots/0123456789abcdef`)).status).toBe(404);
  });

  it("the compare view's windows equal the generator's counts, and a compare snapshot answers the same", async () => {
    const [reconciles, status] = ["connector-reconciles-not-ready", "project-connector-status-puts"].map(
      (id) => counterPresets({ project: [PROJECT_JOB], hub: [HUB_JOB] }).find((c) => c.id === id)!.selector,
    );
    const [hub, project] = ["hub-connector-puts", "project-connector-writes"].map(
      (id) => counterPresets({ project: [PROJECT_JOB], hub: [HUB_JOB] }).find((c) => c.id === id)!.selector,
    );
    const truth = windowTruth(replay, 1);
    const range = `from=${PARAMS.startMs}&to=${PARAMS.endMs}`;
    for (const [a, b, pick] of [
      [reconciles, status, (w: (typeof truth)[number]) => [w.notReadyReconciles, w.statusUpdates]],
      [hub, project, (w: (typeof truth)[number]) => [w.hubConnectorWrites, w.projectConnectorWrites]],
    ] as const) {
      const res = await fetch(`${app.url}/api/panels/compare?${range}&window=1h&a=${encodeURIComponent(a)}&b=${encodeURIComponent(b)}`);
      const body = await res.json();
      expect(res.status, JSON.stringify(body)).toBe(200);
      const rows = compareRows(body.data).rows;
      // 10:00–16:00 holds six whole hours; the generator's own counts, never Prometheus's, are the truth.
      expect(rows.map((r) => r.endMs)).toEqual(truth.map((w) => w.endMs));
      rows.forEach((r, i) => {
        const [ta, tb] = pick(truth[i]);
        expect(r.a, `A ending ${new Date(r.endMs).toISOString()}`).toBeCloseTo(ta, 6);
        expect(r.b, `B ending ${new Date(r.endMs).toISOString()}`).toBeCloseTo(tb, 6);
      });
      expect(rows.some((r) => (r.b ?? 0) > 50)).toBe(true);
    }

    const query = `${range}&window=1h&a=${encodeURIComponent(hub)}&b=${encodeURIComponent(project)}`;
    const download = await fetch(`${app.url}/api/snapshots/export?view=compare&${query}`);
    expect(download.status).toBe(200);
    const upload = await (await uploadSnapshot(app.url, Buffer.from(await download.arrayBuffer()))).json();
    expect(upload.data.comparisons).toEqual([{ a: hub, b: project, window: "1h" }]);
    const live = await (await fetch(`${app.url}/api/panels/compare?${query}`)).json();
    // Typed differently (spacing, quotes), the same counter finds the same snapshot entry.
    const retyped = `from=${PARAMS.startMs}&to=${PARAMS.endMs}&window=60m&a=${encodeURIComponent(hub.replace(/"/g, "'").replace(/, /g, " ,"))}&b=${encodeURIComponent(project)}`;
    const frozen = await (await fetch(`${app.url}/api/panels/compare?snapshot=${upload.data.id}&${retyped}`)).json();
    expect(frozen).toEqual(live);
    const other = await fetch(
      `${app.url}/api/panels/compare?snapshot=${upload.data.id}&${range}&window=1h&a=${encodeURIComponent(reconciles)}&b=${encodeURIComponent(status)}`,
    );
    expect(other.status).toBe(404);
    expect((await other.json()).error).toMatch(/holds only these comparisons: apiserver_request_total\{job="karmada-system/);
  });

  it("the compare API refuses bad counters and windows with a 400 that names them", async () => {
    const base = `${app.url}/api/panels/compare?from=${PARAMS.startMs}&to=${PARAMS.endMs}`;
    const cases: [string, RegExp][] = [
      [`&a=${encodeURIComponent("sum(up)")}&b=up`, /parameter a: column 4/],
      [`&a=up&b=${encodeURIComponent('up{job="x"}) or vector(1')}`, /parameter b: column 12/],
      ["&a=up&b=up&window=10s", /parameter window/],
      ["&a=up&b=up&window=7h", /no whole 7h window/],
    ];
    for (const [suffix, message] of cases) {
      const res = await fetch(base + suffix);
      expect(res.status, suffix).toBe(400);
      expect((await res.json()).error).toMatch(message);
    }
  });
});
