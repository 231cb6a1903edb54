/**
 * One onset: every view of a range that holds the rise names the same minute, the one the generator started the
 * rise at, on the replay (read from its held charts) and on a real Prometheus backfilled with the write-load
 * scenario (read at the scrape interval). The expected minute is the generators' own, never the detector's.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ApiEnvelope } from "@/lib/api/envelope";
import { DEFAULT_REPLAY } from "@/lib/demo/params";
import type { OnsetAnswer } from "@/lib/wire/onset";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { startPrometheus, type TestPrometheus } from "../helpers/prometheus";
import { buildWriteLoadScenario, HUB_JOB, ONSET_SECONDS, PROJECT_JOB } from "../helpers/write-load-scenario";

const at = (iso: string) => String(Date.parse(iso));

async function onset(app: TestApp, params: Record<string, string>): Promise<OnsetAnswer | null> {
  const res = await fetch(`${app.url}/api/onset?${new URLSearchParams(params)}`);
  const body = (await res.json()) as ApiEnvelope<OnsetAnswer | null>;
  expect(res.status, JSON.stringify(body)).toBe(200);
  if (body.status !== "success") throw new Error(body.error);
  return body.data;
}

describe("on the replay", () => {
  let app: TestApp;
  beforeAll(async () => {
    app = await startApp({});
  }, 120_000);
  afterAll(async () => {
    await app?.stop();
  });

  it("names the generator's onset minute in the whole incident, the onset day, ±2 h and a zoom into it", async () => {
    const views = [
      { from: "1788912000000", to: "1789279200000" },
      { from: at("2026-09-11T00:00:00Z"), to: at("2026-09-12T00:00:00Z") },
      { from: at("2026-09-11T11:00:00Z"), to: at("2026-09-11T15:00:00Z") },
      { from: at("2026-09-11T12:40:00Z"), to: at("2026-09-11T13:40:00Z") },
    ];
    const answers = await Promise.all(views.map((v) => onset(app, { ...v, snapshot: "replay" })));
    expect(answers.map((a) => a && new Date(a.timeMs).toISOString())).toEqual(views.map(() => new Date(DEFAULT_REPLAY.onsetMs).toISOString()));
    // Read at the finest held step, whatever the view's own step.
    expect(new Set(answers.map((a) => a?.stepSeconds)).size).toBe(1);
  });

  it("names the same minute with a resource drawn on its own, and names that resource among what rose most", async () => {
    const resource = "connectors.networking.datumapis.com";
    const answer = await onset(app, { from: "1788912000000", to: "1789279200000", resource, snapshot: "replay" });
    expect(answer && new Date(answer.timeMs).toISOString()).toBe(new Date(DEFAULT_REPLAY.onsetMs).toISOString());
    expect(answer?.movers.map((m) => m.labels.resource)).toContain("connectors");
  });

  it("answers none for a quiet range, and 400 for a bad one", async () => {
    expect(await onset(app, { from: at("2026-09-09T00:00:00Z"), to: at("2026-09-10T00:00:00Z"), snapshot: "replay" })).toBeNull();
    const res = await fetch(`${app.url}/api/onset?from=yesterday-ish&snapshot=replay`);
    expect(res.status).toBe(400);
  });
});

describe("on a real Prometheus", () => {
  let prom: TestPrometheus;
  let app: TestApp;
  beforeAll(async () => {
    prom = await startPrometheus(buildWriteLoadScenario());
    const config = writeConfig(
      [
        "prometheus:",
        `  url: ${prom.url}`,
        "  scrapeIntervalSeconds: 15",
        "apiservers:",
        `  project: [${PROJECT_JOB}]`,
        `  hub: [${JSON.stringify(HUB_JOB)}]`,
      ].join("\n"),
    );
    app = await startApp({ CHURNSCOPE_CONFIG: config });
  }, 120_000);
  afterAll(async () => {
    await app?.stop();
    await prom?.stop();
  });

  it("names the scenario's onset minute in a 12-hour, a 4-hour and a 40-minute view", async () => {
    const views: Record<string, string>[] = [
      { from: at("2026-09-11T06:00:00Z"), to: at("2026-09-11T18:00:00Z") },
      { from: at("2026-09-11T12:00:00Z"), to: at("2026-09-11T16:00:00Z") },
      { from: at("2026-09-11T12:50:00Z"), to: at("2026-09-11T13:30:00Z") },
      { from: at("2026-09-11T06:00:00Z"), to: at("2026-09-11T18:00:00Z"), apiserver: PROJECT_JOB },
    ];
    const answers = await Promise.all(views.map((v) => onset(app, v)));
    expect(answers.map((a) => a && new Date(a.timeMs).toISOString())).toEqual(views.map(() => new Date(ONSET_SECONDS * 1000).toISOString()));
    expect(answers.map((a) => a?.stepSeconds)).toEqual(views.map(() => 15));
  });
});
