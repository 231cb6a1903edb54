/**
 * The replay generator against the published numbers of the Connector churn write-up. The checks read the generator's
 * own events, so they fail if the model drifts from the write-up.
 */
import { createHash } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import { replayObjectWrites } from "@/lib/demo/bundle";
import { replaySeries } from "@/lib/demo/metrics";
import { DEFAULT_REPLAY, NAMED, type ReplayParams } from "@/lib/demo/params";
import { generateReplay, type Replay } from "@/lib/demo/replay";
import { fieldTruth, objectTruth, readyTransitions, windowTruth } from "@/lib/demo/truth";
import { openMetricsChunks } from "@/lib/scenario/openmetrics";

const at = (iso: string) => Date.parse(iso);
let replay: Replay;

beforeAll(() => {
  replay = generateReplay();
}, 60_000);

describe("the Connector churn replay reproduces the Connector churn write-up", () => {
  it("has 89 Connectors at the end across about a dozen projects, including the named ones", () => {
    const connectors = objectTruth(replay).filter((o) => o.cluster === "milo" && o.kind === "Connector");
    const deleted = connectors.filter((o) => o.byClass.delete > 0).length;
    expect(connectors.length - deleted).toBe(89);
    expect(new Set(connectors.map((c) => c.namespace)).size).toBe(12);
    const demos = connectors.filter((c) => c.namespace === NAMED.project).map((c) => c.name);
    expect(demos).toEqual(expect.arrayContaining([NAMED.quiet, NAMED.flipsThenFlaps]));
  });

  it("writes Connectors 0–220 per 6 h before the onset and 1150–1570 per 6 h from 18:00Z on the 11th; hub follows almost one for one", () => {
    const windows = windowTruth(replay, 6);
    const before = windows.filter((w) => w.endMs <= at("2026-09-11T12:00:00Z"));
    const during = windows.filter((w) => w.startMs >= at("2026-09-11T18:00:00Z") && w.endMs <= at("2026-09-13T00:00:00Z"));
    expect(before.length).toBe(10);
    expect(during.length).toBe(5);
    for (const w of before) expect(w.projectConnectorWrites).toBeLessThanOrEqual(220);
    const typical = before.filter((w) => w.projectConnectorWrites >= 50 && w.projectConnectorWrites <= 130).length;
    expect(typical).toBeGreaterThanOrEqual(before.length - 2);
    for (const w of during) {
      expect(w.projectConnectorWrites).toBeGreaterThanOrEqual(1150);
      expect(w.projectConnectorWrites).toBeLessThanOrEqual(1570);
      const ratio = w.hubConnectorWrites / w.projectConnectorWrites;
      expect(ratio).toBeGreaterThan(0.9);
      expect(ratio).toBeLessThanOrEqual(1.0);
    }
  });

  it("has reconciles ending not ready track status updates within a few percent per 3 h, and none before 13:00Z", () => {
    const windows = windowTruth(replay, 3);
    for (const w of windows.filter((x) => x.startMs >= at("2026-09-11T15:00:00Z") && x.endMs <= at("2026-09-13T00:00:00Z"))) {
      expect(Math.abs(w.notReadyReconciles - w.statusUpdates) / w.statusUpdates).toBeLessThan(0.06);
      expect(w.notReadyReconciles / 3).toBeGreaterThanOrEqual(100);
      expect(w.notReadyReconciles / 3).toBeLessThanOrEqual(370);
    }
    const quiet = windows.filter((x) => x.startMs >= at("2026-09-11T03:00:00Z") && x.endMs <= at("2026-09-11T12:00:00Z"));
    for (const w of quiet) expect(w.notReadyReconciles).toBe(0);
  });

  it("roughly doubles Lease renewals at the onset (about 1880 to 3300–3800 per 3 h)", () => {
    const windows = windowTruth(replay, 3);
    const before = windows.filter((w) => w.endMs <= at("2026-09-11T12:00:00Z")).map((w) => w.leaseRenewals);
    const during = windows.filter((w) => w.startMs >= at("2026-09-11T15:00:00Z") && w.endMs <= at("2026-09-13T00:00:00Z")).map((w) => w.leaseRenewals);
    const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
    expect(median(before)).toBeGreaterThan(1700);
    expect(median(before)).toBeLessThan(2100);
    expect(median(during)).toBeGreaterThan(3100);
    expect(median(during)).toBeLessThan(3800);
  });

  it("has no Ready transition between 18:12Z on the 11th and 00:45Z on the 13th, and one on the 13th in demos-md21mk", () => {
    const flips = readyTransitions(replay);
    expect(flips.filter((f) => f.timeMs > at("2026-09-11T18:12:00Z") && f.timeMs < at("2026-09-13T00:45:00Z"))).toEqual([]);
    expect(flips.filter((f) => f.timeMs < replay.params.onsetMs).length).toBeGreaterThanOrEqual(3);
    const demos13 = flips.filter((f) => f.namespace === NAMED.project && f.timeMs >= at("2026-09-13T00:00:00Z"));
    expect(demos13.map((f) => f.name)).toEqual([NAMED.onlineOn13th]);
  });

  it("stops writing datum-connect-zr5z4 after about 15:10Z on the 11th", () => {
    const index = replay.sink.objects.findIndex((o) => o.cluster === "milo" && o.kind === "Connector" && o.name === NAMED.quiet);
    const last = Math.max(...replay.sink.writes.filter((w) => w.objectIndex === index).map((w) => w.timeMs));
    expect(last).toBeGreaterThan(at("2026-09-11T15:00:00Z"));
    expect(last).toBeLessThan(at("2026-09-11T15:11:00Z"));
  });

  it("churns a field the edge does not read: the Ready message on the project side, the mirrored annotation on the hub", () => {
    const fields = fieldTruth(replay).filter((f) => f.kind === "Connector");
    expect(fields[0].path).toBe('metadata.annotations["networking.datumapis.com/upstream-status"]');
    expect(fields[0].cluster).toBe("hub");
    const project = fields.filter((f) => f.cluster === "milo");
    expect(project[0].path).toBe("status.conditions[type=Ready].message");
    expect(Object.keys(project[0].writers)).toEqual(["network-services-operator"]);
    const addresses = project.find((f) => f.path === "status.connectionDetails.publicKey.addresses");
    expect(addresses?.writers["datum-connect"]).toBeGreaterThan(1000);
    // Nearly every Connector write after the onset leaves what the edge reads unchanged.
    const writes = replay.sink.writes.filter((w) => w.timeMs > replay.params.onsetMs && replay.sink.objects[w.objectIndex].kind === "Connector");
    expect(writes.filter((w) => w.cls === "routed").length / writes.length).toBeLessThan(0.002);
  });

  it("keeps the agents' connectionDetails PATCHes flat at about 0.003/s", () => {
    const patches = replay.sink.requests.filter((q) => q.resource === "connectors" && q.verb === "PATCH");
    const perSecond = (from: string, to: string) => patches.filter((q) => q.timeMs > at(from) && q.timeMs <= at(to)).length / ((at(to) - at(from)) / 1000);
    expect(perSecond("2026-09-09T00:00:00Z", "2026-09-11T12:00:00Z")).toBeCloseTo(0.003, 3);
    expect(perSecond("2026-09-11T14:00:00Z", "2026-09-13T00:00:00Z")).toBeCloseTo(0.003, 3);
  });

  it("rebuilds every edge site 150–190 times an hour at 13–15 s after the onset, 5–7 s before", () => {
    const hour = 3_600_000;
    for (const site of replay.params.sites) {
      const ends = replay.sink.rebuilds.filter((r) => r.site === site);
      const perHour: number[] = [];
      for (let h = at("2026-09-11T14:00:00Z"); h < at("2026-09-13T00:00:00Z"); h += hour)
        perHour.push(ends.filter((r) => r.startMs + r.durationMs > h && r.startMs + r.durationMs <= h + hour).length);
      const sorted = [...perHour].sort((a, b) => a - b);
      expect(sorted[Math.floor(sorted.length * 0.1)]).toBeGreaterThanOrEqual(140);
      expect(sorted[Math.floor(sorted.length * 0.9)]).toBeLessThanOrEqual(200);
      for (const r of ends) {
        const during = r.startMs >= replay.params.onsetMs && r.startMs < replay.params.eventEndMs;
        expect(r.durationMs).toBeGreaterThanOrEqual(during ? 13_000 : 5_000);
        expect(r.durationMs).toBeLessThanOrEqual(during ? 15_000 : 7_000);
      }
    }
  });

  it("carries the desktop release as a marker, and the infra rollout and its rollback as writes the recorder would have seen", () => {
    expect(replay.params.markers.map((m) => [new Date(m.timeMs).toISOString(), m.label])).toEqual([["2026-09-11T04:04:00.000Z", "DatumConnect v0.1.4"]]);
    const { objects, writes } = replay.sink;
    const releases = writes
      .filter((w) => ["Deployment", "Kustomization"].includes(objects[w.objectIndex].kind))
      .map((w) => [new Date(w.timeMs).toISOString(), objects[w.objectIndex].name, w.cause]);
    // The write-up's times: the gateway image at stable sites at 14:45Z, Flux off v0.83.41 at about 14:50Z; the rollback's is assumed.
    expect(releases).toEqual([
      ["2026-09-11T14:45:00.000Z", "iroh-gateway", "release"],
      ["2026-09-11T14:50:00.000Z", "infra", "release"],
      ["2026-09-11T17:00:00.000Z", "infra", "rollback"],
      ["2026-09-11T17:00:30.000Z", "iroh-gateway", "rollback"],
    ]);
    // network-services-operator's Deployment is there from the start and never written.
    const nso = objects.findIndex((o) => o.kind === "Deployment" && o.name === "network-services-operator");
    expect(nso).toBeGreaterThanOrEqual(0);
    expect(writes.some((w) => w.objectIndex === nso)).toBe(false);
  });
});

describe("replay determinism", () => {
  it("is byte-stable for a seed, and a different seed gives different data", () => {
    const small: ReplayParams = {
      ...DEFAULT_REPLAY,
      startMs: at("2026-09-11T10:00:00Z"),
      endMs: at("2026-09-11T16:00:00Z"),
      sites: ["edge-a", "edge-b"],
      connectors: 20,
      projects: 4,
    };
    const digest = (params: ReplayParams) => {
      const r = generateReplay(params);
      const hash = createHash("sha256");
      for (const chunk of openMetricsChunks(replaySeries(r))) hash.update(chunk);
      hash.update(JSON.stringify(replayObjectWrites(r)));
      return hash.digest("hex");
    };
    const first = digest(small);
    expect(digest(small)).toBe(first);
    expect(digest({ ...small, seed: small.seed + 1 })).not.toBe(first);
  }, 60_000);
});
