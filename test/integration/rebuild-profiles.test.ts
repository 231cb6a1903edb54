/**
 * Rebuild profile detection against real Prometheus servers, one per metric family: each picks the
 * profile whose counter is present, reads the bucket bounds as the exporter wrote them, and says
 * what it checked. With none present the panels say what they looked for.
 */
import { afterAll, describe, expect, it } from "vitest";
import { createPromClient } from "@/lib/prometheus/client";
import { detectRebuildProfile } from "@/lib/rebuilds/detect";
import { SeriesBuilder } from "@/lib/scenario/series-builder";
import { startPrometheus, type TestPrometheus } from "../helpers/prometheus";

const START = Date.parse("2026-09-11T12:00:00Z") / 1000;
const grid = { startSeconds: START, endSeconds: START + 3600, intervalSeconds: 15 };
const bounds = { startSeconds: START, endSeconds: START + 3600 };
const running: TestPrometheus[] = [];
afterAll(async () => {
  await Promise.all(running.map((p) => p.stop()));
});

type Family = (b: SeriesBuilder) => void;
const FAMILIES: Record<string, Family> = {
  "envoy-gateway": (b) => {
    b.count("watchable_subscribe_total", { cluster: "s1", runner: "xds", message: "xds-ir", status: "success" }, START + 10);
    b.observe("watchable_subscribe_duration_seconds", { cluster: "s1", runner: "xds", message: "xds-ir" }, [0.001, 0.01, 0.1, 1, 5, 10], START + 10, 12_000);
  },
  "envoy-gateway-legacy": (b) => {
    b.count("watchable_subscribe_total", { cluster: "s1", runner: "xds-translator", message: "xds-ir", status: "success" }, START + 10);
    b.observe("watchable_subscribe_duration_seconds", { cluster: "s1", runner: "xds-translator", message: "xds-ir" }, [0.1, 1, 5, 10], START + 10, 3_000);
  },
  "nso-extension": (b) => {
    b.count("nso_extension_hook_calls_total", { cluster: "s1", outcome: "success" }, START + 10);
    b.observe("nso_extension_hook_duration_seconds", { cluster: "s1", outcome: "success" }, [0.5, 1, 2.5, 5, 10], START + 10, 800);
  },
  contour: (b) => {
    b.count("contour_dagrebuild_total", { cluster: "s1" }, START + 10);
    b.count("contour_dagrebuild_seconds_count", { cluster: "s1" }, START + 10);
  },
  istio: (b) => {
    b.count("pilot_xds_pushes", { cluster: "s1", type: "cds" }, START + 10);
    b.observe("pilot_proxy_convergence_time", { cluster: "s1" }, [0.1, 0.5, 1, 3, 5, 10, 20, 30], START + 10, 400);
  },
  kgateway: (b) => {
    b.count("kgateway_xds_snapshot_syncs_total", { cluster: "s1", gateway: "gw1", namespace: "default" }, START + 10);
    b.observe("kgateway_xds_snapshot_sync_duration_seconds", { cluster: "s1", gateway: "gw1", namespace: "default" }, [0.01, 0.1, 1, 5, 10], START + 10, 40);
  },
  "nginx-gateway-fabric": (b) => {
    b.observeValue(
      "nginx_gateway_fabric_event_batch_processing_milliseconds",
      { cluster: "s1", class: "nginx" },
      [500, 1000, 5000, 10000, 30000],
      START + 10,
      700,
    );
  },
};

async function detectWith(families: Family[]) {
  const b = new SeriesBuilder(grid);
  b.count("up", { job: "x" }, START + 10);
  for (const f of families) f(b);
  const prom = await startPrometheus(b.build());
  running.push(prom);
  return detectRebuildProfile(createPromClient({ url: prom.url, headers: {}, timeoutMs: 10_000 }), bounds, "auto");
}

describe("rebuild profile detection on a real Prometheus", () => {
  for (const [id, family] of Object.entries(FAMILIES)) {
    it(`picks ${id} when only its metrics are present`, async () => {
      const detected = await detectWith([family]);
      expect(detected?.profile.id).toBe(id);
      expect(detected?.reason).toContain(detected!.profile.count.metric);
    });
  }

  it("prefers Envoy Gateway over the extension server when both are scraped, and reads its bucket bounds", async () => {
    const detected = await detectWith([FAMILIES["nso-extension"], FAMILIES["envoy-gateway"]]);
    expect(detected?.profile.id).toBe("envoy-gateway");
    expect(detected?.buckets).toEqual([0.001, 0.01, 0.1, 1, 5, 10]);
  });

  it("reads a histogram in milliseconds' bucket bounds in seconds", async () => {
    const detected = await detectWith([FAMILIES["nginx-gateway-fabric"]]);
    expect(detected?.buckets).toEqual([0.5, 1, 5, 10, 30]);
  });

  it("names what it tried before the profile it picked", async () => {
    const detected = await detectWith([FAMILIES.contour]);
    expect(detected?.reason).toMatch(/checked first, without data: watchable_subscribe_total, nso_extension_hook_calls_total/);
    expect(detected?.buckets).toEqual([]);
  });

  it("finds nothing when no family is present", async () => {
    expect(await detectWith([])).toBeNull();
  });
});
