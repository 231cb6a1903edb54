/**
 * Per-resource storage panels on real kube-apiserver scrapes of every version from 1.16 to 1.36
 * (New Relic's in ../shared/fixtures, and this project's own rig's in test/fixtures/apiserver-metrics): each scrape's storage series, with every label as the API server wrote it,
 * are backfilled into a real Prometheus as counters that rise by a known step each 15 s, one job per version.
 * Effective writes, the API's own writes beside them, writes by verb and the stored-changes line of no-op
 * evidence for a resource must equal the steps of the series this test picks out of the raw scrape by the label
 * values each version is known to use (a resource and group apart, one dotted name, or a Go type), whichever
 * form the scrape holds; and every Write load panel answers on every version without a warning.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiEnvelope } from "@/lib/api/envelope";
import { PANELS } from "@/lib/panels/catalog";
import type { PanelData } from "@/lib/panels/run-panel";
import type { CounterSeries } from "@/lib/scenario/counters";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { METRIC_STORES } from "../helpers/metric-stores";
import type { TestPrometheus } from "../helpers/prometheus";
import { ROOT } from "../helpers/root";
import { sharedData } from "../helpers/shared-data";

const FAMILIES = [
  "etcd_requests_total",
  "etcd_request_duration_seconds_count",
  "apiserver_watch_cache_events_received_total",
  "apiserver_storage_events_received_total",
  "apiserver_request_total",
  "apiserver_watch_events_total",
];
const WRITE_VERBS = ["POST", "PUT", "PATCH", "APPLY", "DELETE", "DELETECOLLECTION"];
const START_S = Date.parse("2026-11-02T00:00:00Z") / 1000;
const STEP_S = 15;
const SAMPLES = 161; // 40 minutes
const FROM = new Date((START_S + 600) * 1000).toISOString();
const TO = new Date((START_S + 2400) * 1000).toISOString();

interface Scrape {
  version: string;
  job: string;
  series: { name: string; labels: Record<string, string>; stepPerSample: number }[];
}

/** How each version spells a resource: group and resource apart, one dotted name, or the stored Go type. */
const RESOURCES = {
  "leases.coordination.k8s.io": { resource: "leases", group: "coordination.k8s.io", dotted: "leases.coordination.k8s.io", goType: "*coordination.Lease" },
  pods: { resource: "pods", group: "", dotted: "pods", goType: "*core.Pod" },
  namespaces: { resource: "namespaces", group: "", dotted: "namespaces", goType: "*core.Namespace" },
};
type Spelling = (typeof RESOURCES)[keyof typeof RESOURCES];
const names = (l: Record<string, string>, r: Spelling) =>
  (l.resource === r.resource && (l.group ?? "") === r.group) ||
  (l.resource === r.dotted && l.group === undefined) ||
  l.type === r.dotted ||
  l.type === r.goType;

/** The scrape's lines of the storage families, read here on their own: `name{k="v",…} value`. */
function readScrape(file: string, version: string): Scrape {
  const job = `apiserver-${version.replace(".", "-")}`;
  const series: Scrape["series"] = [];
  for (const line of gunzipSync(readFileSync(file)).toString("utf8").split("\n")) {
    const open = line.indexOf("{");
    if (open < 0 || !FAMILIES.includes(line.slice(0, open))) continue;
    const labels = Object.fromEntries([...line.slice(open, line.lastIndexOf("}")).matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    // Of the requests, the writes (the panels read no others); they are most of a scrape's series.
    if (line.startsWith("apiserver_request_total{") && !WRITE_VERBS.includes(labels.verb)) continue;
    series.push({ name: line.slice(0, open), labels, stepPerSample: 1 + (series.length % 7) });
  }
  return { version, job, series };
}

function scrapes(): Scrape[] {
  const out: Scrape[] = [];
  for (let minor = 16; minor <= 35; minor++)
    out.push(readScrape(sharedData(`fixtures/apiserver-metrics-nri-kubernetes/metrics-1.${minor}.txt.gz`), `1.${minor}`));
  out.push(readScrape(join(ROOT, "test", "fixtures", "apiserver-metrics", "kube-apiserver", "metrics-1.36.txt.gz"), "1.36"));
  return out.sort((a, b) => Number(a.version.split(".")[1]) - Number(b.version.split(".")[1]));
}

/** The counter the panel reads for effective writes, by what the scrape holds: storage events, then etcd's request counters, then the watch cache. */
function effectiveFamily(s: Scrape): string {
  const has = (name: string) => s.series.some((x) => x.name === name);
  return [
    "apiserver_storage_events_received_total",
    "etcd_requests_total",
    "etcd_request_duration_seconds_count",
    "apiserver_watch_cache_events_received_total",
  ].find(has)!;
}

/** Write requests per second of the resource by verb and subresource, dry runs left out (group and resource apart in every version). */
function expectedByVerb(s: Scrape, r: Spelling): Map<string, number> {
  const out = new Map<string, number>();
  for (const x of requestsOf(s, r)) {
    const key = `${x.labels.verb} ${x.labels.subresource ?? ""}`;
    out.set(key, (out.get(key) ?? 0) + x.stepPerSample / STEP_S);
  }
  return out;
}

const requestsOf = (s: Scrape, r: Spelling) =>
  s.series.filter(
    (x) => x.name === "apiserver_request_total" && x.labels.resource === r.resource && (x.labels.group ?? "") === r.group && (x.labels.dry_run ?? "") === "",
  );

/** Writes per second of the resource in that family: the sum of its series' steps (etcd: its create, update and delete requests). */
function expectedRate(s: Scrape, family: string, r: Spelling): number {
  const matching = s.series.filter(
    (x) => x.name === family && names(x.labels, r) && (!family.startsWith("etcd_") || ["create", "update", "delete"].includes(x.labels.operation)),
  );
  return matching.reduce((sum, x) => sum + x.stepPerSample, 0) / STEP_S;
}

const all = scrapes();
let prom: TestPrometheus;
let app: TestApp;

// Each engine that reads windows its own way: Debian's Prometheus 2 and Prometheus 3 (test/helpers/metric-stores.ts).
describe.each(METRIC_STORES.filter((store) => store.flavor === "prometheus"))("on $name", (store) => {
  beforeAll(async () => {
    const series: CounterSeries[] = [];
    for (const s of all) {
      for (const x of s.series) {
        // Well above zero, so rate() never stops its extrapolation at zero.
        const values = Float64Array.from({ length: SAMPLES }, (_, i) => 10_000 + i * x.stepPerSample);
        series.push({ name: x.name, labels: { ...x.labels, job: s.job, instance: "10.0.0.1:6443" }, startSeconds: START_S, intervalSeconds: STEP_S, values });
      }
    }
    prom = await store.start(series);
    const config = writeConfig(
      [`prometheus:`, `  url: ${prom.url}`, `  scrapeIntervalSeconds: ${STEP_S}`, `apiservers:`, `  project: [${all.map((s) => s.job).join(", ")}]`].join("\n"),
    );
    app = await startApp({ CHURNSCOPE_CONFIG: config });
  }, 240_000);

  afterAll(async () => {
    await app?.stop();
    await prom?.stop();
  });

  async function panel(id: string, job: string, resource: string): Promise<PanelData & { infos: string[] }> {
    const res = await fetch(`${app.url}/api/panels/${id}?${new URLSearchParams({ from: FROM, to: TO, apiserver: job, resource, step: "300" })}`);
    const body = (await res.json()) as ApiEnvelope<PanelData>;
    expect(res.status, JSON.stringify(body)).toBe(200);
    if (body.status !== "success") throw new Error(body.error);
    expect(body.warnings).toEqual([]);
    return { ...body.data, infos: body.infos };
  }

  describe("the storage panels on real scrapes of every version", () => {
    it("has a scrape of every version from 1.16 to 1.36, in all three label forms", () => {
      expect(all.map((s) => s.version)).toEqual(Array.from({ length: 21 }, (_, i) => `1.${16 + i}`));
      const lease = RESOURCES["leases.coordination.k8s.io"];
      const forms = new Set(
        all.map((s) => s.series.find((x) => x.name.startsWith("etcd_") && names(x.labels, lease) && x.labels.operation === "update")!.labels),
      );
      const spelled = [...forms].map((l) => (l.type === lease.goType ? "go type" : l.type === lease.dotted ? "dotted" : "group and resource"));
      expect(new Set(spelled)).toEqual(new Set(["go type", "dotted", "group and resource"]));
    });

    it("answers every Write load panel on every version, for a resource and for all, without a warning", async () => {
      const failures: string[] = [];
      for (const s of all) {
        for (const resource of ["leases.coordination.k8s.io", ""]) {
          for (const def of PANELS) {
            if (resource === "" && def.needsResource) continue;
            const query = new URLSearchParams({ from: FROM, to: TO, apiserver: s.job, step: "300", ...(resource ? { resource } : {}) });
            const res = await fetch(`${app.url}/api/panels/${def.id}?${query}`);
            const body = (await res.json()) as ApiEnvelope<PanelData>;
            if (res.status !== 200 || body.status !== "success" || body.warnings.length > 0)
              failures.push(`${s.version} ${def.id} ${resource}: ${res.status} ${JSON.stringify(body).slice(0, 300)}`);
          }
        }
      }
      expect(failures).toEqual([]);
    });

    for (const s of all) {
      // Every scrape has leases (the API server's own); pods and namespaces where that cluster wrote them.
      for (const [resource, spelling] of Object.entries(RESOURCES).filter(
        ([name, r]) => name.startsWith("leases") || expectedRate(s, effectiveFamily(s), r) > 0,
      )) {
        it(`${s.version}: effective writes and stored changes of ${resource}`, async () => {
          const family = effectiveFamily(s);
          const expected = expectedRate(s, family, spelling);
          expect(expected, `the ${s.version} scrape has no ${family} series of ${resource}`).toBeGreaterThan(0);
          const effective = await panel("effective-writes", s.job, resource);
          const line = effective.series.find((x) => String(x.labels.series).startsWith("effective writes"));
          expect(line, JSON.stringify(effective)).toBeDefined();
          expect(line!.labels.series).toBe(
            family === "apiserver_storage_events_received_total"
              ? "effective writes (storage events)"
              : family === "apiserver_watch_cache_events_received_total"
                ? "effective writes (watch cache)"
                : "effective writes (etcd)",
          );
          expect(line!.points.length).toBeGreaterThan(3);
          for (const [, value] of line!.points) expect(value).toBeCloseTo(expected, 9);

          // The API's own count beside it, and by verb and subresource.
          const api2xx = requestsOf(s, spelling)
            .filter((x) => x.labels.code.startsWith("2"))
            .reduce((sum, x) => sum + x.stepPerSample / STEP_S, 0);
          const api = effective.series.find((x) => x.labels.series === "API writes (2xx)");
          if (api2xx > 0) for (const [, value] of api!.points) expect(value).toBeCloseTo(api2xx, 9);
          const verbs = await panel("writes-by-verb", s.job, resource);
          const byVerb = expectedByVerb(s, spelling);
          expect(verbs.series.map((x) => `${x.labels.verb} ${x.labels.subresource ?? ""}`).sort()).toEqual([...byVerb.keys()].sort());
          for (const x of verbs.series)
            for (const [, value] of x.points) expect(value).toBeCloseTo(byVerb.get(`${x.labels.verb} ${x.labels.subresource ?? ""}`)!, 9);

          const evidence = await panel("noop-evidence", s.job, resource);
          const stored = evidence.series.find((x) => x.labels.series === "stored changes (storage events, one replica)");
          const storageRate = expectedRate(s, "apiserver_storage_events_received_total", spelling);
          if (s.series.some((x) => x.name === "apiserver_storage_events_received_total")) {
            expect(stored, JSON.stringify(evidence)).toBeDefined();
            for (const [, value] of stored!.points) expect(value).toBeCloseTo(storageRate, 9);
          } else {
            expect(stored).toBeUndefined();
            expect(evidence.infos).toContain(
              "apiserver_storage_events_received_total (Kubernetes 1.30+) is not scraped here, so stored changes are not shown.",
            );
          }
        });
      }
    }
  });
});
