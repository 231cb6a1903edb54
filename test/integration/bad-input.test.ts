/**
 * Input no route can take, against the real server: a malformed %-escape in any path, TRACE, and a
 * step longer than the range. Each is a 4xx envelope with the security headers, never Next's bare
 * 500. And a crash's half-written upload is gone once the server has started again.
 */
import { existsSync, mkdirSync, mkdtempSync, utimesSync, writeFileSync } from "node:fs";
import { request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startApp, writeConfig, type TestApp } from "../helpers/app";

let app: TestApp;
let dataDir = "";
const leftover = () => join(dataDir, "uploads", "0b7e4c1e-crashed.upload");

beforeAll(async () => {
  dataDir = mkdtempSync(join(tmpdir(), "churnscope-bad-input-"));
  mkdirSync(join(dataDir, "uploads"), { recursive: true });
  writeFileSync(leftover(), "half an audit log");
  // Older than the server about to start, as a crash's leftover is.
  utimesSync(leftover(), new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
  app = await startApp({
    AUDIT_TOKEN: "t0k3n-for-tests",
    CHURNSCOPE_DATA_DIR: dataDir,
    CHURNSCOPE_CONFIG: writeConfig(`audit:\n  webhookToken: { env: AUDIT_TOKEN }\n`),
  });
}, 90_000);
afterAll(async () => {
  await app?.stop();
});

/** A raw request: fetch would refuse TRACE and re-encode some paths. */
function raw(method: string, path: string): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> {
  const url = new URL(app.url);
  return new Promise((resolve, reject) => {
    const req = request({ host: url.hostname, port: url.port, method, path }, (res) => {
      let body = "";
      res.on("data", (d) => (body += d));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end(method === "POST" ? "{}" : undefined);
  });
}

describe("input no route can take", () => {
  it("a malformed %-escape in any path, and TRACE: a 4xx envelope with the security headers", async () => {
    const cases: [string, string, number][] = [
      ["GET", "/api/snapshots/%zz", 400],
      ["GET", "/api/objects/a/b/%zz", 400],
      ["GET", "/objects/%ff", 400],
      ["DELETE", "/api/notes/%", 400],
      ["POST", "/api/audit/webhook/%", 400],
      ["GET", "/api/panels/%E0%A4%A", 400],
      ["GET", "/%", 400],
      ["TRACE", "/", 405],
      ["TRACE", "/api/panels/writes-by-resource", 405],
    ];
    for (const [method, path, status] of cases) {
      const res = await raw(method, path);
      expect([method, path, res.status]).toEqual([method, path, status]);
      expect(res.headers["content-type"]).toBe("application/json");
      expect(res.headers["x-content-type-options"]).toBe("nosniff");
      expect(res.headers["x-frame-options"]).toBe("DENY");
      expect(JSON.parse(res.body)).toMatchObject({ status: "error", error: expect.any(String) });
    }
    // A valid escape still reaches its route.
    expect((await raw("GET", "/api/snapshots/0123456789abcde%66")).status).toBe(404);
  });

  it("a step longer than the range is the client's error (400), not Prometheus's (502)", async () => {
    const res = await fetch(`${app.url}/api/panels/writes-by-resource?snapshot=replay&from=1788912000000&to=1789279200000&step=9999999999`);
    expect(res.status).toBe(400);
    expect((await res.json()).error).toMatch(/parameter step: at most the range/);
  });

  it("removes an upload a crash left half-written once it starts", async () => {
    for (let i = 0; i < 40 && existsSync(leftover()); i++) await new Promise((r) => setTimeout(r, 250));
    expect(existsSync(leftover())).toBe(false);
    expect(existsSync(join(dataDir, "uploads"))).toBe(true);
  });
});
