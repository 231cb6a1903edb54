/**
 * serve.cjs hands every /api/* request to the API pipeline before Next's routing (lib/server/node-api.ts);
 * `next start` reaches the same pipeline through its catch-all route. Whichever way a request came,
 * the answer is the same: status, envelope, access decision and security headers. Both servers run on
 * the same build and configuration, and the same requests go to each.
 */
import { gunzipSync } from "node:zlib";
import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { answeredBeforeNext, nextStartCommand, startApp, writeConfig, type TestApp } from "../helpers/app";

const PASSWORD = "fast-path-password";
const basic = `Basic ${Buffer.from(`sre:${PASSWORD}`).toString("base64")}`;
const RANGE = "from=1788912000000&to=1789279200000";

let ours: TestApp;
let nextOnly: TestApp;

beforeAll(async () => {
  const env = { BASIC_PASSWORD: PASSWORD, CHURNSCOPE_CONFIG: writeConfig(`auth:\n  basicAuth: { username: sre, password: { env: BASIC_PASSWORD } }\n`) };
  [ours, nextOnly] = await Promise.all([startApp(env), startApp(env, nextStartCommand)]);
}, 120_000);
afterAll(async () => {
  await Promise.all([ours?.stop(), nextOnly?.stop()]);
});

const SAME_HEADERS = [
  "content-type",
  "cache-control",
  "etag",
  "x-content-type-options",
  "x-frame-options",
  "referrer-policy",
  "permissions-policy",
  "www-authenticate",
];

async function both(path: string, init: RequestInit = {}) {
  const [a, b] = await Promise.all([fetch(`${ours.url}${path}`, init), fetch(`${nextOnly.url}${path}`, init)]);
  return { ours: a, next: b };
}

describe("the API, before Next and through it", () => {
  const cases: [string, string, Record<string, string>][] = [
    ["a chart from the replay", `/api/panels/writes-by-resource?snapshot=replay&${RANGE}`, { authorization: basic }],
    ["a small chart from the replay", `/api/panels/lease-renewals?snapshot=replay&${RANGE}&apiserver=nope`, { authorization: basic }],
    ["a bad range", `/api/panels/writes-by-resource?snapshot=replay&from=yesterday`, { authorization: basic }],
    ["an unknown panel", `/api/panels/nope?${RANGE}`, { authorization: basic }],
    ["an unknown snapshot", `/api/panels/writes-by-verb?snapshot=gone&${RANGE}`, { authorization: basic }],
    ["no Prometheus configured", `/api/panels/writes-by-verb?${RANGE}`, { authorization: basic }],
    ["no credentials", `/api/panels/writes-by-resource?snapshot=replay&${RANGE}`, {}],
    ["wrong credentials", `/api/panels/writes-by-resource?snapshot=replay&${RANGE}`, { authorization: "Bearer nope" }],
  ];

  it.each(cases)("gives what Next gives for %s", async (_what, path, headers) => {
    const { ours: a, next: b } = await both(path, { headers });
    expect(answeredBeforeNext(a)).toBe(true);
    expect(answeredBeforeNext(b)).toBe(false);
    expect(a.status).toBe(b.status);
    for (const name of SAME_HEADERS) expect(a.headers.get(name), name).toBe(b.headers.get(name));
    // The policy is the same but for each response's own nonce.
    const policy = (r: Response) => (r.headers.get("content-security-policy") ?? "").replace(/'nonce-[^']+'/, "'nonce'");
    expect(policy(a)).toBe(policy(b));
    expect(policy(a)).toContain("frame-ancestors 'none'");
    expect(await a.json()).toEqual(await b.json());
  });

  it("compresses what is worth it when the client accepts gzip, and says it varies on that", async () => {
    const path = `/api/panels/writes-by-resource?snapshot=replay&${RANGE}`;
    const plain = await rawGet(path, { authorization: basic });
    const zipped = await rawGet(path, { authorization: basic, "accept-encoding": "br;q=1, gzip;q=0.5" });
    const refused = await rawGet(path, { authorization: basic, "accept-encoding": "gzip;q=0, identity" });
    expect(plain.headers["content-encoding"]).toBeUndefined();
    expect(refused.headers["content-encoding"]).toBeUndefined();
    expect(zipped.headers["content-encoding"]).toBe("gzip");
    for (const r of [plain, zipped, refused]) expect(r.headers.vary).toBe("Accept-Encoding");
    expect(zipped.body.length).toBeLessThan(plain.body.length / 4);
    expect(gunzipSync(zipped.body).toString()).toBe(plain.body.toString());
    expect(Number(zipped.headers["content-length"])).toBe(zipped.body.length);
  });

  it("tags a success with an ETag the browser may revalidate, answers 304 to it, and never tags a failure", async () => {
    const path = `/api/panels/writes-by-resource?snapshot=replay&${RANGE}`;
    for (const app of [ours, nextOnly]) {
      const first = await fetch(`${app.url}${path}`, { headers: { authorization: basic } });
      const etag = first.headers.get("etag");
      expect(etag).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
      expect(first.headers.get("cache-control")).toBe("private, no-cache");
      const again = await fetch(`${app.url}${path}`, { headers: { authorization: basic, "if-none-match": etag! } });
      expect(again.status).toBe(304);
      expect(await again.text()).toBe("");
      // Another answer, another tag; credentials are still checked before anything is sent.
      const other = await fetch(`${app.url}/api/panels/lease-renewals?snapshot=replay&${RANGE}`, { headers: { authorization: basic, "if-none-match": etag! } });
      expect(other.status).toBe(200);
      expect((await fetch(`${app.url}${path}`, { headers: { "if-none-match": etag! } })).status).toBe(401);
      const failed = await fetch(`${app.url}/api/panels/writes-by-resource?snapshot=replay&from=yesterday`, { headers: { authorization: basic } });
      expect([failed.status, failed.headers.get("etag"), failed.headers.get("cache-control")]).toEqual([400, null, "no-store"]);
    }
  });

  it("tags a snapshot's Clients answer and onset as it tags a panel, a snapshot never changing, and a live one not at all", async () => {
    for (const path of [`/api/clients?snapshot=replay&${RANGE}`, `/api/clients/calls?snapshot=replay&${RANGE}`, `/api/onset?snapshot=replay&${RANGE}`]) {
      const first = await fetch(`${ours.url}${path}`, { headers: { authorization: basic } });
      const etag = first.headers.get("etag");
      expect(etag, path).toMatch(/^"[A-Za-z0-9_-]{22}"$/);
      const again = await fetch(`${ours.url}${path}`, { headers: { authorization: basic, "if-none-match": etag! } });
      expect(again.status, path).toBe(304);
    }
    const live = await fetch(`${ours.url}/api/clients?${RANGE}`, { headers: { authorization: basic } });
    expect([live.status, live.headers.get("etag"), live.headers.get("cache-control")]).toEqual([200, null, "no-store"]);
  });

  it("answers HEAD with the headers alone", async () => {
    const head = await rawGet(`/api/panels/writes-by-resource?snapshot=replay&${RANGE}`, { authorization: basic }, "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers["content-type"]).toBe("application/json");
    expect(head.body.length).toBe(0);
  });

  it("answers a malformed escape in the panel id with a 400 that says so (Next's answer was a bare 500)", async () => {
    const res = await fetch(`${ours.url}/api/panels/%E0%A4%A?${RANGE}`, { headers: { authorization: basic } });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ status: "error", errorType: "bad_data", error: "the path is not valid percent-encoding" });
  });

  it("checks access on every API path, known or not, and leaves pages to Next, which checks it too", async () => {
    for (const path of ["/api/panels/writes-by-resource/extra", "/api/markers", "/api/nope"]) {
      const res = await fetch(`${ours.url}${path}`, { redirect: "manual" });
      expect([path, res.status, answeredBeforeNext(res)]).toEqual([path, 401, true]);
    }
    const page = await fetch(`${ours.url}/`, { redirect: "manual" });
    expect([page.status, answeredBeforeNext(page)]).toEqual([401, false]);
    const unknown = await fetch(`${ours.url}/api/panels/writes-by-resource/extra`, { headers: { authorization: basic } });
    expect([unknown.status, (await unknown.json()).errorType]).toEqual([404, "not_found"]);
    const post = await fetch(`${ours.url}/api/panels/writes-by-resource?${RANGE}`, { method: "POST", headers: { authorization: basic } });
    expect([post.status, post.headers.get("allow")]).toEqual([405, "GET, HEAD"]);
  });
});

/** A GET without fetch's own Accept-Encoding and decompression, so the bytes on the wire can be checked. */
function rawGet(
  path: string,
  headers: Record<string, string>,
  method = "GET",
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(`${ours.url}${path}`, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}
