/** The API pipeline on web Requests, as either server hands them over: access, routes, envelopes, headers. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "@/lib/config/load";
import { handleApi, type ApiResponse } from "@/lib/server/api";
import { buildContext } from "@/lib/server/context";
import { startServer } from "@/lib/server/start";

function context(yaml: string) {
  const dir = mkdtempSync(join(tmpdir(), "api-"));
  writeFileSync(join(dir, "churnscope.yaml"), yaml);
  const ctx = buildContext(loadConfig({ CHURNSCOPE_DATA_DIR: join(dir, "data"), API_PASS: "s3cret" }, dir));
  return ctx;
}

const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const json = (response: ApiResponse) => JSON.parse(Buffer.from(response.body ?? new Uint8Array()).toString("utf8"));

describe("handleApi", () => {
  const ctx = context("auth:\n  basicAuth: { username: sre, password: { env: API_PASS } }\n");
  beforeAll(() => startServer(ctx));
  const ask = (path: string, init: RequestInit = {}) => handleApi(() => ctx, new Request(`http://dashboard${path}`, init));

  it("admits the dashboard's users only, with the challenge that says how to sign in", async () => {
    for (const path of ["/api/markers", "/api/objects", "/api/panels/writes-by-verb", "/api/snapshots/export", "/api/clients"]) {
      const refused = await ask(path);
      expect([path, refused.status, json(refused).errorType, refused.headers["WWW-Authenticate"]]).toEqual([
        path,
        401,
        "unauthorized",
        'Basic realm="Churnscope", charset="UTF-8"',
      ]);
    }
    for (const [path, method] of [
      ["/api/audit/uploads", "POST"],
      ["/api/snapshots", "POST"],
      ["/api/notes", "POST"],
    ]) {
      expect((await ask(path, { method, body: "{}" })).status, path).toBe(401);
    }
    expect((await ask("/api/markers?from=now-1h", { headers: { authorization: basic("sre", "wrong") } })).status).toBe(401);
    expect((await ask("/api/markers?from=now-1h", { headers: { authorization: basic("sre", "s3cret") } })).status).toBe(200);
  });

  it("leaves the audit webhook to its own token, which the dashboard's users do not have", async () => {
    const off = await ask("/api/audit/webhook", { method: "POST", body: "{}" });
    expect([off.status, json(off).error]).toEqual([404, "the audit webhook is off: set audit.webhookToken in the configuration"]);
  });

  it("gives a note the admitted user as its author, whatever header the client sent", async () => {
    const added = await ask("/api/notes", {
      method: "POST",
      headers: { authorization: basic("sre", "s3cret"), "x-churnscope-user": "mallory", "content-type": "application/json" },
      body: JSON.stringify({ timeMs: Date.UTC(2026, 10, 30), text: "rollback" }),
    });
    expect([added.status, json(added)]).toMatchObject([200, { data: { author: "sre" } }]);
  });

  it("takes writes only from its own pages: not from another site, nor with a body a form can send", async () => {
    const note = (headers: Record<string, string>) =>
      ask("/api/notes", {
        method: "POST",
        headers: { authorization: basic("sre", "s3cret"), ...headers },
        body: JSON.stringify({ timeMs: Date.UTC(2026, 10, 30), text: "from elsewhere" }),
      });
    const json = { "content-type": "application/json" };
    const refused = async (headers: Record<string, string>) => {
      const res = await note(headers);
      return [res.status, (JSON.parse(new TextDecoder().decode(res.body!)) as { errorType: string }).errorType];
    };
    expect(await refused({ ...json, "sec-fetch-site": "cross-site" })).toEqual([403, "forbidden"]);
    expect(await refused({ ...json, "sec-fetch-site": "same-site" })).toEqual([403, "forbidden"]);
    expect(await refused({ ...json, origin: "https://evil.example" })).toEqual([403, "forbidden"]);
    expect(await refused({ ...json, origin: "null" })).toEqual([403, "forbidden"]);
    for (const type of ["application/x-www-form-urlencoded", "multipart/form-data; boundary=x", "text/plain;charset=UTF-8"])
      expect(await refused({ "content-type": type })).toEqual([415, "unsupported_media_type"]);
    expect(await refused({})).toEqual([415, "unsupported_media_type"]);
    // The dashboard's own page, and a script that names its body's type.
    expect((await note({ ...json, "sec-fetch-site": "same-origin", origin: "http://dashboard", host: "dashboard" })).status).toBe(200);
    expect((await note(json)).status).toBe(200);
    // A delete has no body; another site's is refused all the same.
    const del = await ask("/api/notes/none", { method: "DELETE", headers: { authorization: basic("sre", "s3cret"), "sec-fetch-site": "cross-site" } });
    expect(del.status).toBe(403);
  });

  it("puts the security headers and a policy on every answer, and never lets a failure be kept", async () => {
    for (const response of [
      await ask("/api/markers"),
      await ask("/api/nope"),
      await ask("/api/markers?from=now-1h", { headers: { authorization: basic("sre", "s3cret") } }),
    ]) {
      expect(response.headers["X-Content-Type-Options"]).toBe("nosniff");
      expect(response.headers["Content-Security-Policy"]).toContain("frame-ancestors 'none'");
      expect(response.headers["Cache-Control"]).toBe("no-store");
    }
  });
});
