/**
 * A seeded fuzzer over every route and page, against the real server in front of a real Prometheus:
 * 2,400 requests with hostile paths (malformed and double escapes, reserved and non-ASCII characters),
 * parameters (huge numbers, PromQL fragments, very long values) and bodies (junk, wrong JSON, deep
 * nesting). Input is the client's fault: no answer is a 5xx, every error is a JSON envelope with the
 * security headers, and the server answers normally afterwards.
 */
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRng, type Rng } from "@/lib/scenario/rng";
import { rssMiB, startApp, writeConfig, type TestApp } from "../helpers/app";
import { startPrometheus, type TestPrometheus } from "../helpers/prometheus";
import { buildWriteLoadScenario, PROJECT_JOB } from "../helpers/write-load-scenario";

const REQUESTS = 2_400;
const FROM_MS = Date.parse("2026-09-11T12:00:00Z");

let prom: TestPrometheus;
let app: TestApp;

beforeAll(async () => {
  prom = await startPrometheus(buildWriteLoadScenario());
  app = await startApp({
    AUDIT_TOKEN: "fuzz-token",
    CHURNSCOPE_CONFIG: writeConfig(
      `prometheus:\n  url: ${prom.url}\n  scrapeIntervalSeconds: 15\napiservers:\n  project: [${PROJECT_JOB}]\naudit:\n  webhookToken: { env: AUDIT_TOKEN }\n`,
    ),
  });
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await prom?.stop();
});

const ROUTES = [
  "/api/panels/writes-by-resource",
  "/api/panels/writes-by-verb",
  "/api/panels/effective-writes",
  "/api/panels/rebuild-rate",
  "/api/panels/compare",
  "/api/panels/*",
  "/api/objects",
  "/api/objects/lanes",
  "/api/objects/*/*/*/*/*/writes",
  "/api/objects/*/*/*/*/*/timeline",
  "/api/objects/*/*/*/*/*/write",
  "/api/fields",
  "/api/markers",
  "/api/onset",
  "/api/apiservers",
  "/api/clients",
  "/api/snapshots",
  "/api/snapshots/*",
  "/api/snapshots/export",
  "/api/grafana",
  "/api/notes",
  "/api/notes/*",
  "/api/audit/webhook",
  "/api/audit/webhook/*",
  "/api/audit/uploads",
  "/",
  "/rebuilds",
  "/compare",
  "/objects",
  "/objects/lanes",
  "/objects/*/*/*/*/*",
  "/fields",
  "/clients",
  "/metrics",
  "/readyz",
  "/healthz",
];
const SEGMENTS = [
  "%zz",
  "%",
  "%E0%A4%A",
  "%25zz",
  "%2F",
  "..",
  ".",
  "a:b",
  "ü",
  "名前",
  "a b",
  "x".repeat(300),
  "replay",
  "0123456789abcdef",
  "core",
  "_",
  "Connector",
  "%00",
  "\u0000",
  "@",
  "';--",
];
const VALUES = [
  "",
  "now",
  "now-6h",
  "now-99999d",
  String(FROM_MS),
  "1e309",
  "-1",
  "NaN",
  "9999999999999999999",
  "0x10",
  "x".repeat(5000),
  'x"} or vector(1) #',
  "\\\\",
  "connectors",
  "connectors.networking.datumapis.com",
  "Connectors",
  "%zz",
  "ü",
  "[]",
  "{}",
  "true",
  "1,2",
  PROJECT_JOB,
];
const PARAMS = [
  "from",
  "to",
  "step",
  "width",
  "apiserver",
  "resource",
  "snapshot",
  "page",
  "pageSize",
  "class",
  "cluster",
  "kind",
  "group",
  "namespace",
  "a",
  "b",
  "at",
  "view",
  "x",
];
const BODIES = [
  undefined,
  "",
  "{",
  "null",
  "[]",
  '{"timeMs":"x","text":5}',
  '{"kind":"EventList","items":[{"kind":"Event"}]}',
  `{"items":${"[".repeat(5000)}${"]".repeat(5000)}}`,
  "\u0000\u0001\u0002",
  '{"timeMs":1789130000000,"text":"fuzz"}',
];
const METHODS = ["GET", "GET", "GET", "POST", "DELETE", "PUT", "HEAD", "OPTIONS", "PATCH", "TRACE"];

const pick = <T>(rng: Rng, list: readonly T[]) => list[Math.floor(rng() * list.length)];

function fuzzed(rng: Rng): { method: string; path: string; body?: string; headers: Record<string, string> } {
  // As a browser sends them: characters a request line cannot carry are escaped; `%` sequences, malformed ones too, stay as written.
  const route = pick(rng, ROUTES).replace(/\*/g, () => pick(rng, SEGMENTS).replace(/[^A-Za-z0-9\-._~!$&'()*+,;=:@%]/gu, (c) => encodeURIComponent(c)));
  const params = Array.from(
    { length: Math.floor(rng() * 5) },
    () => `${encodeURIComponent(pick(rng, PARAMS))}=${rng() < 0.15 ? pick(rng, ["%zz", "%", "%E0"]) : encodeURIComponent(pick(rng, VALUES))}`,
  );
  const method = pick(rng, METHODS);
  const headers: Record<string, string> = {};
  if (rng() < 0.2) headers.authorization = pick(rng, ["Bearer fuzz-token", "Bearer nope", "Basic !!", "x"]);
  if (rng() < 0.2) headers["content-type"] = pick(rng, ["application/json", "text/plain", "application/octet-stream"]);
  return {
    method,
    path: `${route}${params.length ? `?${params.join("&")}` : ""}`,
    body: method === "POST" || method === "PUT" ? pick(rng, BODIES) : undefined,
    headers,
  };
}

function send(
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; text: string }> {
  const url = new URL(app.url);
  return new Promise((resolve, reject) => {
    const req = request(
      {
        host: url.hostname,
        port: url.port,
        method,
        path,
        headers: body === undefined ? headers : { ...headers, "content-length": String(Buffer.byteLength(body)) },
      },
      (res) => {
        let text = "";
        res.on("data", (d) => (text += d));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text }));
      },
    );
    req.on("error", reject);
    req.setTimeout(30_000, () => req.destroy(new Error(`no answer in 30 s to ${method} ${path}`)));
    req.end(body);
  });
}

describe("fuzzing every route", () => {
  it(`${REQUESTS} seeded requests: no 5xx, every API error an envelope with the security headers`, async () => {
    const rng = createRng(20_261_201);
    const fiveHundreds: string[] = [];
    const badErrors: string[] = [];
    const statuses = new Map<number, number>();
    for (let i = 0; i < REQUESTS; i++) {
      const { method, path, body, headers } = fuzzed(rng);
      const res = await send(method, path, headers, body);
      statuses.set(res.status, (statuses.get(res.status) ?? 0) + 1);
      if (res.status >= 500) fiveHundreds.push(`${res.status} ${method} ${path.slice(0, 120)}: ${res.text.slice(0, 160)}`);
      // Dot segments resolve the path elsewhere (browsers resolve them before sending), so such a path is an API path only without them.
      const apiPath = path.startsWith("/api/") && !/\/\.\.?(\/|\?|$)/.test(path);
      if (res.status >= 400 && apiPath && method !== "HEAD") {
        const envelope = (() => {
          try {
            return JSON.parse(res.text);
          } catch {
            return null;
          }
        })();
        if (envelope?.status !== "error" || res.headers["x-content-type-options"] !== "nosniff")
          badErrors.push(`${res.status} ${method} ${path.slice(0, 120)}: ${res.text.slice(0, 120)}`);
      }
    }
    console.log(
      `fuzz: ${REQUESTS} requests, statuses ${JSON.stringify(Object.fromEntries([...statuses].sort(([a], [b]) => a - b)))}, RSS ${Math.round(rssMiB(app))} MiB`,
    );
    expect(fiveHundreds).toEqual([]);
    expect(badErrors).toEqual([]);
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    expect((await fetch(`${app.url}/api/panels/writes-by-resource?from=${FROM_MS}&to=${FROM_MS + 3_600_000}`)).status).toBe(200);
    expect(rssMiB(app)).toBeLessThan(1024);
  }, 600_000);
});
