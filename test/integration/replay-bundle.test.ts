/**
 * The committed replay bundle (what `npm start` opens with nothing configured) against the
 * generator's ground truth: the numbers Prometheus computed and Churnscope exported must equal the
 * events the generator wrote, and reproduce the Connector churn write-up's windows.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { replayObjectWrites } from "@/lib/demo/bundle";
import { objectBytes, WATCHERS } from "@/lib/demo/metrics";
import { generateReplay, type Replay } from "@/lib/demo/replay";
import { REPLAY_INITIAL_VIEW, replayRanges } from "@/lib/demo/replay-views";
import { isProjectConnectorWrite, objectTruth, windowTruth } from "@/lib/demo/truth";
import { sortedJson, type Json } from "@/lib/churn/json";
import { HUB_JOB, PROJECT_JOB } from "@/lib/demo/types";
import { decodeSnapshot } from "@/lib/snapshot/format/codec";
import type { Snapshot } from "@/lib/snapshot/format/schema";
import { REPLAY_BUNDLE_PATH } from "@/lib/snapshot/store";
import { ROOT } from "../helpers/root";

const CONNECTORS = "connectors.networking.datumapis.com";
const at = (iso: string) => Date.parse(iso);
let replay: Replay;
let bundle: Snapshot;

beforeAll(() => {
  replay = generateReplay();
  bundle = decodeSnapshot(readFileSync(join(ROOT, REPLAY_BUNDLE_PATH)), 64 << 20);
}, 60_000);

function entry(panel: string, apiserver?: string, resource?: string) {
  const whole = replay.params;
  const found = bundle.panels.find(
    (p) => p.panel === panel && p.startMs === whole.startMs && p.endMs === whole.endMs && p.apiserver === apiserver && p.resource === resource,
  );
  if (!found) throw new Error(`bundle has no ${panel} for ${apiserver}/${resource}`);
  return found.result.data;
}

/**
 * Counts per window from a rate series whose window equals its step: each point is the exact
 * number of events in (t − step, t] divided by step, so the points add up to exact counts.
 */
function countsPerWindow(data: ReturnType<typeof entry>, pick: (labels: Record<string, string>) => boolean, hours: number): Map<number, number> {
  expect(data.query).toContain(`[${data.stepSeconds}s]`);
  const size = hours * 3_600_000;
  const out = new Map<number, number>();
  for (const s of data.series.filter((x) => pick(x.labels))) {
    for (const [t, value] of s.points) {
      if (value === null) continue;
      const count = value * data.stepSeconds;
      expect(Math.abs(count - Math.round(count))).toBeLessThan(1e-6);
      const windowStart = Math.ceil(t / size) * size - size;
      out.set(windowStart, (out.get(windowStart) ?? 0) + Math.round(count));
    }
  }
  return out;
}

describe("the committed replay bundle", () => {
  it("holds the replay's ranges, initial view, markers and API-server roles", () => {
    expect(bundle.source).toBe("replay");
    expect(bundle.ranges).toEqual(replayRanges(replay.params));
    expect(bundle.initialView).toEqual(REPLAY_INITIAL_VIEW(replay.params));
    expect(bundle.markers).toEqual(replay.params.markers);
    expect(bundle.apiservers).toEqual([
      { job: PROJECT_JOB, role: "project" },
      { job: HUB_JOB, role: "hub" },
    ]);
  });

  it("project and hub Connector writes per 6 h equal the generator's counts and reproduce the seed's windows", () => {
    const project = countsPerWindow(entry("writes-by-verb", PROJECT_JOB, CONNECTORS), () => true, 6);
    const hub = countsPerWindow(entry("writes-by-verb", HUB_JOB, CONNECTORS), (l) => l.verb === "PUT", 6);
    const truth = windowTruth(replay, 6);
    expect(truth.length).toBe(17);
    for (const w of truth) {
      expect(project.get(w.startMs) ?? 0, new Date(w.startMs).toISOString()).toBe(w.projectConnectorWrites);
      expect(hub.get(w.startMs) ?? 0, new Date(w.startMs).toISOString()).toBe(w.hubConnectorWrites);
    }
    for (let start = at("2026-09-11T18:00:00Z"); start < at("2026-09-13T00:00:00Z"); start += 6 * 3_600_000) {
      const p = project.get(start)!;
      expect(p).toBeGreaterThanOrEqual(1150);
      expect(p).toBeLessThanOrEqual(1570);
      expect(hub.get(start)! / p).toBeGreaterThan(0.9);
    }
    for (let start = replay.params.startMs; start < at("2026-09-11T12:00:00Z"); start += 6 * 3_600_000) expect(project.get(start)).toBeLessThanOrEqual(220);
  });

  it("Lease renewals per 3 h equal the generator's counts", () => {
    const renewals = countsPerWindow(entry("lease-renewals", PROJECT_JOB), (l) => l.verb === "PATCH", 3);
    for (const w of windowTruth(replay, 3)) expect(renewals.get(w.startMs) ?? 0, new Date(w.startMs).toISOString()).toBe(w.leaseRenewals);
  });

  it("the totals over the whole range equal the generator's counts for Connectors and Leases", () => {
    const { startMs, endMs } = replay.params;
    const totals = entry("write-totals", PROJECT_JOB);
    const shown = new Map(totals.series.map((s) => [`${s.labels.resource} ${s.labels.verb} ${s.labels.subresource ?? ""}`, s.points.at(-1)![1]]));
    const truth = new Map<string, number>();
    for (const q of replay.sink.requests) {
      const lease = q.job === PROJECT_JOB && q.resource === "leases";
      if (q.timeMs <= startMs || q.timeMs > endMs || !(isProjectConnectorWrite(q) || lease)) continue;
      const key = `${q.resource} ${q.verb} ${q.subresource ?? ""}`;
      truth.set(key, (truth.get(key) ?? 0) + 1);
    }
    expect(truth.size).toBeGreaterThanOrEqual(6);
    for (const [key, count] of truth) expect(shown.get(key), key).toBeCloseTo(count, 6);
  });

  it("edge rebuilds per site-hour and per-window mean durations equal the generator's, at 150–190 an hour during the event", () => {
    const rate = entry("rebuild-rate");
    expect(rate.profile?.id).toBe("envoy-gateway");
    const hourly = new Map<string, Map<number, number>>();
    for (const s of rate.series) {
      const perHour = new Map<number, number>();
      for (const [t, value] of s.points) {
        if (value === null) continue;
        const count = (value * rate.stepSeconds) / 3600;
        expect(Math.abs(count - Math.round(count))).toBeLessThan(1e-6);
        const hour = Math.ceil(t / 3_600_000) * 3_600_000 - 3_600_000;
        perHour.set(hour, (perHour.get(hour) ?? 0) + Math.round(count));
      }
      hourly.set(s.labels.cluster, perHour);
    }
    expect([...hourly.keys()].sort()).toEqual([...replay.params.sites].sort());
    const during: number[] = [];
    for (const [site, perHour] of hourly) {
      for (const [hour, count] of perHour) {
        const truth = replay.sink.rebuilds.filter(
          (r) => r.site === site && r.startMs + r.durationMs > hour && r.startMs + r.durationMs <= hour + 3_600_000,
        ).length;
        expect(count, `${site} ${new Date(hour).toISOString()}`).toBe(truth);
        if (hour >= at("2026-09-11T14:00:00Z") && hour < at("2026-09-13T00:00:00Z")) during.push(count);
      }
    }
    during.sort((a, b) => a - b);
    expect(during[Math.floor(during.length * 0.1)]).toBeGreaterThanOrEqual(145);
    expect(during[Math.floor(during.length * 0.9)]).toBeLessThanOrEqual(195);

    const mean = entry("rebuild-duration-mean");
    const w = mean.stepSeconds * 1000;
    for (const s of mean.series) {
      for (const [t, value] of s.points) {
        const done = replay.sink.rebuilds.filter((r) => r.site === s.labels.cluster && r.startMs + r.durationMs > t - w && r.startMs + r.durationMs <= t);
        if (done.length === 0) continue;
        expect(value).toBeCloseTo(done.reduce((a, r) => a + r.durationMs, 0) / done.length / 1000, 6);
      }
    }
  });

  it("the project API server's cost per write and write bodies equal the generator's, and the hub's missing families are named", () => {
    const cost = entry("request-cost", PROJECT_JOB);
    for (const [flow, resource] of [
      ["service-accounts", "connectors"],
      ["workload-leader-election", "leases"],
    ]) {
      const watchers = cost.series.find((s) => s.labels.series === "watchers notified" && s.labels.flow_schema === flow)!;
      const values = watchers.points.map(([, v]) => v).filter((v): v is number => v !== null);
      expect(values.length, flow).toBeGreaterThan(50);
      for (const v of values) expect(v, flow).toBeCloseTo(WATCHERS[`${PROJECT_JOB}/${resource}`], 9);
    }
    const sizes = entry("object-sizes", PROJECT_JOB);
    const body = sizes.series.find((s) => s.labels.series === "mean write body" && s.labels.resource === "connectors")!;
    const stepMs = sizes.stepSeconds * 1000;
    let checked = 0;
    for (const [t, value] of body.points) {
      const writes = replay.sink.requests.filter(
        (q) => q.job === PROJECT_JOB && q.resource === "connectors" && q.code < 300 && q.timeMs > t - stepMs && q.timeMs <= t,
      );
      if (writes.length === 0) {
        expect(value).toBeNull();
        continue;
      }
      expect(value, new Date(t).toISOString()).toBeCloseTo(writes.reduce((n, q) => n + objectBytes("connectors", q.timeMs), 0) / writes.length, 6);
      checked++;
    }
    expect(checked).toBeGreaterThan(50);
    const hub = bundle.panels.find((p) => p.panel === "noop-evidence" && p.apiserver === HUB_JOB && p.resource === undefined)!;
    expect(hub.result.infos).toContain("apiserver_storage_events_received_total (Kubernetes 1.30+) is not scraped here, so stored changes are not shown.");
  });

  it("carries every object write of the generator, per object", () => {
    // Compared as canonical JSON: the schema parser may order keys differently.
    expect(sortedJson(bundle.objectWrites as unknown as Json) === sortedJson(replayObjectWrites(replay) as unknown as Json)).toBe(true);
    const perObject = new Map<number, number>();
    for (const w of bundle.objectWrites!.writes) perObject.set(w.o, (perObject.get(w.o) ?? 0) + 1);
    objectTruth(replay).forEach((o, i) => expect(perObject.get(i) ?? 0, `${o.kind} ${o.namespace}/${o.name}`).toBe(o.writes));
  });
});
