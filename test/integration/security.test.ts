/**
 * Access control and what leaves the server: with built-in basic auth and a bearer token configured,
 * nothing but the probes answers without credentials; pages carry a nonce-based CSP and the other
 * security headers; a client cannot claim to be someone else; and no configured secret, nor
 * Prometheus's address, appears in any response or in the browser bundles.
 */
import { readdirSync, readFileSync, statSync, writeFileSync, mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { gunzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, writeConfig, type TestApp } from "../helpers/app";
import { startPrometheus, type TestPrometheus } from "../helpers/prometheus";
import { ROOT } from "../helpers/root";
import { buildWriteLoadScenario, PROJECT_JOB } from "../helpers/write-load-scenario";

const SECRETS = {
  prometheusToken: "prom-token-5c1d9e7a",
  basicPassword: "basic-pass-8e2f4b6c",
  bearer: "bearer-token-3a7b9d1f",
  orgHeader: "tenant-4f8e2a",
  webhook: "audit-hook-6d2c8f0e",
};
const FROM = Date.parse("2026-09-11T12:00:00Z");
const TO = Date.parse("2026-09-11T16:00:00Z");

let prom: TestPrometheus;
let app: TestApp;
let configPath = "";
const basic = `Basic ${Buffer.from(`sre:${SECRETS.basicPassword}`).toString("base64")}`;

beforeAll(async () => {
  prom = await startPrometheus(buildWriteLoadScenario());
  const bearerFile = join(mkdtempSync(join(tmpdir(), "churnscope-secret-")), "token");
  writeFileSync(bearerFile, `${SECRETS.bearer}\n`);
  configPath = writeConfig(
    `prometheus:\n  url: ${prom.url}\n  scrapeIntervalSeconds: 15\n  bearerToken: { env: PROM_TOKEN }\n  headers: { X-Scope-OrgID: ${SECRETS.orgHeader} }\n` +
      `apiservers:\n  project: [${PROJECT_JOB}]\n` +
      `auth:\n  basicAuth: { username: sre, password: { env: BASIC_PASSWORD } }\n  bearerToken: { file: ${bearerFile} }\n` +
      `audit:\n  webhookToken: { env: AUDIT_TOKEN }\n`,
  );
  app = await startApp({
    PROM_TOKEN: SECRETS.prometheusToken,
    BASIC_PASSWORD: SECRETS.basicPassword,
    AUDIT_TOKEN: SECRETS.webhook,
    CHURNSCOPE_CONFIG: configPath,
  });
}, 120_000);
afterAll(async () => {
  await app?.stop();
  await prom?.stop();
});

const get = (path: string, authorization?: string, extra: Record<string, string> = {}) =>
  fetch(`${app.url}${path}`, { redirect: "manual", headers: { ...(authorization ? { authorization } : {}), ...extra } });

describe("built-in access control", () => {
  it("admits nobody without credentials except the probes", async () => {
    for (const path of [
      "/",
      "/rebuilds",
      "/compare",
      "/clients",
      "/api/panels/writes-by-resource",
      "/api/markers",
      "/api/clients",
      "/metrics",
      "/api/snapshots/export",
      "/api/grafana",
    ]) {
      const res = await get(path);
      expect(res.status, path).toBe(401);
      expect(res.headers.get("www-authenticate")).toBe('Basic realm="Churnscope", charset="UTF-8"');
      expect((await res.json()).error).toMatch(/sign in: send basic auth or a bearer token/);
    }
    expect((await get("/", `Basic ${Buffer.from("sre:wrong").toString("base64")}`)).status).toBe(401);
    expect((await get("/", `Basic ${Buffer.from(`root:${SECRETS.basicPassword}`).toString("base64")}`)).status).toBe(401);
    expect((await get("/", "Bearer nope")).status).toBe(401);
    // Uploads skip the proxy (it would buffer them) and check credentials themselves.
    for (const path of ["/api/audit/uploads", "/api/snapshots"]) {
      const res = await fetch(`${app.url}${path}`, { method: "POST", body: "{}" });
      expect(res.status, path).toBe(401);
      expect((await res.json()).error).toMatch(/sign in/);
    }
    expect(
      (
        await fetch(`${app.url}/api/audit/uploads`, {
          method: "POST",
          headers: { authorization: basic, "content-type": "application/octet-stream" },
          body: "{}",
        })
      ).status,
    ).toBe(200);
    // The webhook has its own token: the dashboard's credentials do not open it, its token does.
    const batch = JSON.stringify({ kind: "EventList", apiVersion: "audit.k8s.io/v1", items: [] });
    expect((await fetch(`${app.url}/api/audit/webhook`, { method: "POST", headers: { authorization: basic }, body: batch })).status).toBe(401);
    expect((await fetch(`${app.url}/api/audit/webhook`, { method: "POST", headers: { authorization: `Bearer ${SECRETS.webhook}` }, body: batch })).status).toBe(
      200,
    );
    expect((await get("/healthz")).status).toBe(200);
    expect((await get("/readyz")).status).toBe(200);
  });

  it("admits basic auth and the bearer token, and names the user on notes whatever the client claims", async () => {
    expect((await get(`/api/panels/writes-by-resource?from=${FROM}&to=${TO}`, basic)).status).toBe(200);
    expect((await get(`/api/panels/writes-by-resource?from=${FROM}&to=${TO}`, `Bearer ${SECRETS.bearer}`)).status).toBe(200);
    const note = await fetch(`${app.url}/api/notes`, {
      method: "POST",
      headers: { authorization: basic, "content-type": "application/json", "x-churnscope-user": "mallory" },
      body: JSON.stringify({ timeMs: FROM + 60_000, text: "who am I" }),
    });
    expect((await note.json()).data.author).toBe("sre");
  });

  it("sends a nonce-based Content-Security-Policy and the other security headers", async () => {
    const res = await get(`/?from=${FROM}&to=${TO}`, basic);
    expect(res.status).toBe(200);
    const csp = res.headers.get("content-security-policy") ?? "";
    const nonce = /'nonce-([^']+)'/.exec(csp)?.[1];
    expect(csp).toMatch(/default-src 'self'/);
    expect(csp).toMatch(/frame-ancestors 'none'/);
    expect(csp).toMatch(/object-src 'none'/);
    expect(csp).not.toMatch(/unsafe-eval/);
    const html = await res.text();
    const scripts = [...html.matchAll(/<script\b[^>]*>/g)].map((m) => m[0]);
    expect(scripts.length).toBeGreaterThan(0);
    for (const tag of scripts) expect(tag, tag).toContain(`nonce="${nonce}"`);
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("referrer-policy")).toBe("same-origin");
    // Another response, another nonce.
    expect((await get("/rebuilds", basic)).headers.get("content-security-policy")).not.toContain(nonce);
  });
});

describe("secrets stay on the server", () => {
  it("appear in no response, header or browser bundle; nor does Prometheus's address", async () => {
    // No answer names a file on the server: not the configuration's path (readyz said it), nor the token file's.
    const needles = [...Object.values(SECRETS), new URL(prom.url).host, configPath, dirname(configPath)];
    const seen: { where: string; text: string }[] = [];
    const paths = [
      `/?from=${FROM}&to=${TO}&apiserver=${PROJECT_JOB}`,
      `/rebuilds?from=${FROM}&to=${TO}`,
      `/compare?from=${FROM}&to=${TO}`,
      `/objects?from=${FROM}&to=${TO}`,
      `/fields?from=${FROM}&to=${TO}`,
      "/no-such-page",
      ...["writes-by-resource", "write-totals", "effective-writes", "watch-fanout", "rebuild-rate"].map((p) => `/api/panels/${p}?from=${FROM}&to=${TO}`),
      `/api/panels/writes-by-verb?from=${FROM}&to=${TO}`,
      `/api/panels/writes-by-resource?from=${FROM}&to=${TO}&apiserver=nope`,
      `/api/panels/compare?from=${FROM}&to=${TO}&a=up&b=${encodeURIComponent('nonexistent_total{x="1"}')}`,
      `/api/apiservers?from=${FROM}&to=${TO}`,
      `/api/markers?from=${FROM}&to=${TO}`,
      `/api/onset?from=${FROM}&to=${TO}`,
      `/api/objects?from=${FROM}&to=${TO}`,
      `/clients?from=${FROM}&to=${TO}`,
      `/api/clients?from=${FROM}&to=${TO}`,
      "/metrics",
      "/readyz",
    ];
    for (const path of paths) {
      const res = await get(path, basic);
      seen.push({ where: path, text: `${[...res.headers].map(([k, v]) => `${k}: ${v}`).join("\n")}\n${await res.text()}` });
    }
    const bundle = await get(`/api/snapshots/export?from=${FROM}&to=${TO}`, basic);
    expect(bundle.status).toBe(200);
    seen.push({ where: "snapshot export", text: gunzipSync(Buffer.from(await bundle.arrayBuffer())).toString("utf8") });
    const walk = (dir: string): string[] =>
      readdirSync(dir).flatMap((name) => (statSync(join(dir, name)).isDirectory() ? walk(join(dir, name)) : [join(dir, name)]));
    const chunks = walk(join(ROOT, ".next", "static"));
    expect(chunks.filter((f) => f.endsWith(".js")).length).toBeGreaterThan(5);
    for (const file of chunks) seen.push({ where: file, text: readFileSync(file, "utf8") });
    for (const { where, text } of seen) for (const needle of needles) expect(text.includes(needle), `${needle} in ${where}`).toBe(false);
  }, 60_000);
});
