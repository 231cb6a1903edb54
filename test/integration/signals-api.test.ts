/**
 * The signal panels (no-op evidence, cost per write, sizes) against a real Prometheus backfilled with
 * the signals scenario. Every expected value is counted from the scenario's own events; samples sit on
 * a 15 s grid and every instant and window edge on it, so rates and means are exact (see
 * write-load-api.test.ts).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiEnvelope } from "@/lib/api/envelope";
import { joinResource } from "@/lib/panels/resource-name";
import type { PanelData } from "@/lib/panels/run-panel";
import { writeLoadRequests } from "@/lib/panels/write-load-requests";
import { startApp, writeConfig, type TestApp, uploadSnapshot } from "../helpers/app";
import { METRIC_STORES, withoutEngineNotes } from "../helpers/metric-stores";
import type { TestPrometheus } from "../helpers/prometheus";
import { buildSignalsScenario, CONSUMER_NAMES, eventsIn, OLD_SIGNALS_JOB, SIGNALS_JOB, type SignalsScenario } from "../helpers/signals-scenario";

const FROM = Date.parse("2026-10-01T10:30:00Z");
const TO = Date.parse("2026-10-01T11:30:00Z");
const STEP = 60;
const INSTANTS = Array.from({ length: (TO - FROM) / 1000 / STEP + 1 }, (_, i) => FROM / 1000 + i * STEP);

let scenario: SignalsScenario;
let prom: TestPrometheus;
let app: TestApp;

async function panel(id: string, params: Record<string, string> = {}): Promise<{ data: PanelData; infos: string[] }> {
  const query = new URLSearchParams({ from: String(FROM), to: String(TO), step: String(STEP), apiserver: SIGNALS_JOB, ...params });
  const res = await fetch(`${app.url}/api/panels/${id}?${query}`);
  const body = (await res.json()) as ApiEnvelope<PanelData>;
  expect(res.status, JSON.stringify(body)).toBe(200);
  if (body.status !== "success") throw new Error(body.error);
  expect(body.warnings).toEqual([]);
  return { data: body.data, infos: withoutEngineNotes(body.infos ?? []) };
}

/** The panel's series whose labels match, as value by instant (seconds). */
function valuesOf(data: PanelData, match: Record<string, string>): Map<number, number | null> {
  const found = data.series.filter((s) => Object.entries(match).every(([k, v]) => (s.labels[k] ?? "") === v));
  expect(found, `${data.panel}: one series for ${JSON.stringify(match)} in ${JSON.stringify(data.series.map((s) => s.labels))}`).toHaveLength(1);
  return new Map(found[0].points.map(([tsMs, v]) => [tsMs / 1000, v]));
}

/** Every instant of the range: the panel's value against the truth, to 1e-9 relative. */
function expectExact(values: Map<number, number | null>, truth: (t: number) => number | null, what: string) {
  for (const t of INSTANTS) {
    const want = truth(t);
    const got = values.get(t) ?? null;
    if (want === null) expect(got, `${what} at ${t}`).toBeNull();
    else expect(got, `${what} at ${new Date(t * 1000).toISOString()}`).toBeCloseTo(want, 9);
  }
}

const perSecond = (n: number) => n / STEP;
const ofResource = (resource: string) => (e: { resource?: string }) => e.resource === resource;
const RESOURCES = [
  ["connectors", "networking.datumapis.com"],
  ["leases", "coordination.k8s.io"],
  ["configmaps", ""],
] as const;

describe.each(METRIC_STORES)("on $name", (store) => {
  beforeAll(async () => {
    scenario = buildSignalsScenario();
    prom = await store.start(scenario.series);
    const config = writeConfig(
      [`prometheus:`, `  url: ${prom.url}`, `  scrapeIntervalSeconds: 15`, `apiservers:`, `  project: [${SIGNALS_JOB}, ${OLD_SIGNALS_JOB}]`].join("\n"),
    );
    app = await startApp({ CHURNSCOPE_CONFIG: config });
  });
  afterAll(async () => {
    await app?.stop();
    await prom?.stop();
  });

  describe("signal panels", () => {
    it("no-op evidence: API writes without dry runs, stored changes from one replica, managedFields-only updates and each consumer's own count", async () => {
      const { data, infos } = await panel("noop-evidence");
      expect(infos).toEqual([]);
      expectExact(valuesOf(data, { series: "API writes (2xx)" }), (t) => perSecond(eventsIn(scenario, "write", t, STEP).length), "API writes");
      // Both replicas receive every stored change: a sum would double it.
      expectExact(
        valuesOf(data, { series: "stored changes (storage events, one replica)" }),
        (t) => perSecond(eventsIn(scenario, "stored", t, STEP).length),
        "stored changes",
      );
      expectExact(
        valuesOf(data, { series: "managedFields-only updates (reverted; whole API server)" }),
        (t) => perSecond(eventsIn(scenario, "equal-objects", t, STEP).length),
        "equal objects",
      );
      for (const [consumer, name] of Object.entries(CONSUMER_NAMES)) {
        expectExact(
          valuesOf(data, { series: name }),
          (t) => perSecond(eventsIn(scenario, "consumer-noop", t, STEP, (e) => e.consumer === consumer).length),
          name,
        );
      }
      const stored = eventsIn(scenario, "stored", TO / 1000, 3600).length;
      const written = eventsIn(scenario, "write", TO / 1000, 3600).length;
      expect(stored / written).toBeGreaterThan(0.3);
      expect(stored / written).toBeLessThan(0.8);
    });

    it("dry runs are left out by default and counted when asked", async () => {
      const { data } = await panel("noop-evidence", { dryRun: "include" });
      expectExact(
        valuesOf(data, { series: "API writes (2xx)" }),
        (t) => perSecond(eventsIn(scenario, "write", t, STEP).length + eventsIn(scenario, "dry-run", t, STEP).length),
        "API writes with dry runs",
      );
      expect(eventsIn(scenario, "dry-run", TO / 1000, 3600).length).toBeGreaterThan(50);
      const totals = await panel("write-totals", { resource: "connectors.networking.datumapis.com" });
      const withDry = await panel("write-totals", { resource: "connectors.networking.datumapis.com", dryRun: "include" });
      const sum = (d: PanelData) => d.series.reduce((n, s) => n + (s.points[0][1] ?? 0), 0);
      const range = (TO - FROM) / 1000;
      expect(sum(totals.data)).toBe(eventsIn(scenario, "write", TO / 1000, range, ofResource("connectors")).length);
      expect(sum(withDry.data)).toBe(
        eventsIn(scenario, "write", TO / 1000, range, ofResource("connectors")).length + eventsIn(scenario, "dry-run", TO / 1000, range).length,
      );
      const bad = await fetch(`${app.url}/api/panels/noop-evidence?dryRun=yes`);
      expect(bad.status).toBe(400);
      expect((await bad.json()).error).toMatch(/parameter dryRun/);
    });

    it("effective writes are the storage events where the API server counts them", async () => {
      const { data } = await panel("effective-writes", { resource: "connectors.networking.datumapis.com" });
      expectExact(
        valuesOf(data, { series: "effective writes (storage events)" }),
        (t) => perSecond(eventsIn(scenario, "stored", t, STEP, ofResource("connectors")).length),
        "storage events",
      );
    });

    it("cost per mutating request: mean watchers notified and mean seats, by flow schema", async () => {
      const { data } = await panel("request-cost");
      for (const flow of ["workload-leader-election", "service-accounts", "global-default"]) {
        const mean = (field: "value" | "seats") => (t: number) => {
          const requests = eventsIn(scenario, "request", t, STEP, (e) => e.flow_schema === flow);
          return requests.length === 0 ? null : requests.reduce((n, e) => n + e[field]!, 0) / requests.length;
        };
        expectExact(valuesOf(data, { series: "watchers notified", flow_schema: flow }), mean("value"), `watchers ${flow}`);
        expectExact(valuesOf(data, { series: "seats", flow_schema: flow }), mean("seats"), `seats ${flow}`);
      }
    });

    it("watch events per write and watch bytes, by resource", async () => {
      const perWrite = (await panel("fanout-per-write")).data;
      const bytes = (await panel("watch-bytes")).data;
      for (const [resource, group] of RESOURCES) {
        const labels = { resource, group };
        expectExact(
          valuesOf(perWrite, labels),
          (t) => {
            const writes = eventsIn(scenario, "write", t, STEP, ofResource(resource)).length;
            return writes === 0 ? null : eventsIn(scenario, "watch-event", t, STEP, ofResource(resource)).length / writes;
          },
          `events per write ${resource}`,
        );
        expectExact(
          valuesOf(bytes, labels),
          (t) => perSecond(eventsIn(scenario, "watch-event", t, STEP, ofResource(resource)).reduce((n, e) => n + e.value!, 0)),
          `watch bytes ${resource}`,
        );
      }
    });

    it("object sizes: the highest replica's estimate and the mean write body", async () => {
      const { data } = await panel("object-sizes");
      for (const [resource, group] of RESOURCES) {
        expectExact(
          valuesOf(data, { series: "estimated object size", resource, group }),
          // The last sample at or before t from each replica; every replica is scraped at every grid instant.
          (t) => Math.max(...scenario.events.filter((e) => e.kind === "size" && e.t === t && e.resource === resource).map((e) => e.value!)),
          `size ${resource}`,
        );
        expectExact(
          valuesOf(data, { series: "mean write body", resource, group }),
          (t) => {
            const writes = eventsIn(scenario, "write", t, STEP, ofResource(resource));
            return writes.length === 0 ? null : writes.reduce((n, e) => n + e.value!, 0) / writes.length;
          },
          `body ${joinResource(resource, group)}`,
        );
      }
    });

    it("an older API server: each missing family is named, and watch events by kind are not divided by writes", async () => {
      const old = { apiserver: OLD_SIGNALS_JOB };
      const noop = await panel("noop-evidence", old);
      expect(noop.infos).toContain("apiserver_storage_events_received_total (Kubernetes 1.30+) is not scraped here, so stored changes are not shown.");
      expect(noop.infos).toContain("apiserver_request_timestamp_comparison_time is not scraped here.");
      expect(noop.data.series.map((s) => s.labels.series)).toContain("API writes (2xx)");
      expect(noop.data.nothingToDraw).toBeUndefined();
      const effective = await panel("effective-writes", old);
      expect(effective.data.series.map((s) => s.labels.series)).toContain("effective writes (etcd)");
      const perWrite = await panel("fanout-per-write", old);
      expect(perWrite.data.series).toEqual([]);
      expect(perWrite.infos.join(" ")).toMatch(/by kind \(Kubernetes ≤ 1.33\)/);
      const sizes = await panel("object-sizes", old);
      expect(sizes.infos).toEqual([
        "apiserver_resource_size_estimate_bytes (Kubernetes 1.34+) is not scraped here.",
        "apiserver_request_body_size_bytes is not scraped here.",
      ]);
      // Nothing to draw, for the reasons given: the page draws each as one line, not an empty chart.
      expect([perWrite.data.nothingToDraw, sizes.data.nothingToDraw]).toEqual([true, true]);
    });

    it("a downloaded view carries the signal panels and answers them as the live page did", async () => {
      const download = await fetch(`${app.url}/api/snapshots/export?from=${FROM}&to=${TO}&apiserver=${SIGNALS_JOB}`);
      expect(download.status).toBe(200);
      const upload = await uploadSnapshot(app.url, Buffer.from(await download.arrayBuffer()));
      expect(upload.status).toBe(200);
      const id = ((await upload.json()) as { data: { id: string } }).data.id;
      const signalPanels = ["noop-evidence", "request-cost", "fanout-per-write", "watch-bytes", "object-sizes"];
      const calls = Object.values(writeLoadRequests({ startMs: FROM, endMs: TO, apiserver: SIGNALS_JOB })).filter((c) => c && signalPanels.includes(c.panel));
      expect(calls.map((c) => c!.panel).sort()).toEqual([...signalPanels].sort());
      for (const call of calls) {
        const params = new URLSearchParams({ from: String(FROM), to: String(TO), width: "1000", apiserver: SIGNALS_JOB });
        const live = await (await fetch(`${app.url}/api/panels/${call!.panel}?${params}`)).json();
        params.set("snapshot", id);
        const frozen = await (await fetch(`${app.url}/api/panels/${call!.panel}?${params}`)).json();
        expect(live.status, call!.panel).toBe("success");
        expect(live.data.series.length, call!.panel).toBeGreaterThan(0);
        expect(frozen, call!.panel).toEqual(live);
      }
      // The snapshot holds the writes without dry runs; asking it to count them says it does not hold that.
      const withDry = await fetch(
        `${app.url}/api/panels/noop-evidence?from=${FROM}&to=${TO}&width=1000&apiserver=${SIGNALS_JOB}&snapshot=${id}&dryRun=include`,
      );
      expect(withDry.status).toBe(404);
    });
  });
});
