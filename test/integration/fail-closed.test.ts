/**
 * Fail closed, tried as an attacker would against `npm start` with basic auth, a bearer token and a webhook
 * token set: every page and every route of the API's route table × every method × every kind of credential
 * (none, wrong, empty, the webhook's token on the dashboard, the dashboard's on the webhook, right), raw request
 * targets (`*`, absolute-form, dot segments), header tricks, upgrades and writes from other sites. Nothing
 * answers 5xx, nothing but the probes answers with content without valid credentials, no secret appears in any
 * answer, and each kind of empty or unreadable secret stops startup naming its key.
 */
import { once } from "node:events";
import { request } from "node:http";
import { connect } from "node:net";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { API_ROUTES } from "@/lib/server/api-routes";
import { startApp, startCommand, writeConfig, type TestApp } from "../helpers/app";
import { startPrometheus, type TestPrometheus } from "../helpers/prometheus";
import { buildWriteLoadScenario, PROJECT_JOB } from "../helpers/write-load-scenario";

const SECRETS = { password: "fc-basic-pass-2b7e91", bearer: "fc-bearer-9d3c55", webhook: "fc-webhook-71a0e4" };
const basic = (user: string, password: string) => `Basic ${Buffer.from(`${user}:${password}`).toString("base64")}`;
const RIGHT = basic("sre", SECRETS.password);
const CREDENTIALS: Record<string, string | undefined> = {
  none: undefined,
  "wrong basic": basic("sre", "guess"),
  "wrong bearer": "Bearer guess",
  "empty bearer": "Bearer ",
  "empty basic": basic("", ""),
  "empty basic password": basic("sre", ""),
  "webhook token on the dashboard": `Bearer ${SECRETS.webhook}`,
  "dashboard credentials on the webhook": RIGHT,
  right: RIGHT,
};
const METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "PATCH", "OPTIONS"];
const OPEN = new Set(["/healthz", "/readyz"]);
/** Served to anyone, as the page's own assets: the icon and the build's static files (no data, no secret; the bundles are checked for secrets elsewhere). */
const PUBLIC = (path: string) => path === "/icon.svg" || path.startsWith("/_next/static/");
const PAGES = ["/", "/rebuilds", "/objects", "/objects/lanes", "/objects/kind-dev/Connector/ns/name", "/fields", "/compare", "/clients", "/metrics", ...OPEN];
const STATIC = ["/_next/static/chunks/missing.js", "/robots.txt", "/icon.svg", "/_global-error", "/_not-found", "/_error"];
/** One path of each route in the API's table (checked below to cover it). */
const API_PATHS = [
  "/api/panels/writes-by-resource",
  "/api/objects",
  "/api/objects/lanes",
  "/api/objects/traits",
  "/api/objects/flaps",
  "/api/objects/kind-dev/networking.datumapis.com/Connector/ns/name",
  "/api/markers",
  "/api/onset",
  "/api/changes",
  "/api/apiservers",
  "/api/clients",
  "/api/clients/calls",
  "/api/fields",
  "/api/snapshots",
  "/api/snapshots/export",
  "/api/grafana",
  "/api/snapshots/replay",
  "/api/notes",
  "/api/notes/1",
  "/api/audit/webhook/kind-dev",
  "/api/audit/uploads",
  "/api/audit/sources",
  "/api/nope",
];

let app: TestApp;
let prom: TestPrometheus;
let dir = "";

interface Answer {
  status: number;
  headers: string;
  body: string;
}

/** One request as node:http sends it, any method, any target, with a body for the methods that carry one. */
function send(method: string, path: string, headers: Record<string, string> = {}): Promise<Answer> {
  const url = new URL(app.url);
  return new Promise((resolve, reject) => {
    const body = ["POST", "PUT", "PATCH"].includes(method) ? '{"timeMs":1789000000000,"text":"x"}' : undefined;
    const req = request(
      { host: url.hostname, port: url.port, method, path, headers: { ...headers, ...(body ? { "content-type": "application/json" } : {}) } },
      (res) => {
        let text = "";
        res.on("data", (chunk) => (text += chunk));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: JSON.stringify(res.headers), body: text }));
      },
    );
    req.setTimeout(20_000, () => req.destroy(new Error(`${method} ${path} took over 20 s`)));
    req.on("error", reject);
    req.end(body);
  });
}

/** Bytes written straight to the socket: what a client may send that fetch and node:http never would. */
async function raw(text: string, timeoutMs = 5_000): Promise<{ head: string; location: string; closedMs: number }> {
  const url = new URL(app.url);
  const socket = connect(Number(url.port), url.hostname);
  await once(socket, "connect");
  const startedMs = Date.now();
  let received = "";
  socket.on("data", (chunk) => (received += chunk));
  socket.write(text);
  const closed = once(socket, "close").then(() => Date.now() - startedMs);
  const timer = setTimeout(() => socket.destroy(), timeoutMs);
  const closedMs = await closed;
  clearTimeout(timer);
  return { head: received.split("\r\n")[0], location: /\r\nlocation: ([^\r]*)/i.exec(received)?.[1] ?? "", closedMs };
}

const leaks = (a: Answer) => Object.values(SECRETS).filter((s) => a.body.includes(s) || a.headers.includes(s));

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), "churnscope-fail-closed-"));
  writeFileSync(join(dir, "bearer"), `${SECRETS.bearer}\n`);
  prom = await startPrometheus(buildWriteLoadScenario());
  const config = writeConfig(
    [
      `prometheus: { url: "${prom.url}", scrapeIntervalSeconds: 15 }`,
      `apiservers: { project: [${PROJECT_JOB}] }`,
      `auth:`,
      `  basicAuth: { username: sre, password: { env: BASIC_PASSWORD } }`,
      `  bearerToken: { file: ${join(dir, "bearer")} }`,
      `audit:`,
      `  webhookToken: { env: AUDIT_TOKEN }`,
    ].join("\n"),
  );
  app = await startApp({ CHURNSCOPE_CONFIG: config, BASIC_PASSWORD: SECRETS.password, AUDIT_TOKEN: SECRETS.webhook });
}, 120_000);

afterAll(async () => {
  await app?.stop();
  await prom?.stop();
});

describe("fail closed", () => {
  it("covers every route in the API's route table", () => {
    for (const route of API_ROUTES)
      expect(
        API_PATHS.some((p) => route.path.test(p)),
        String(route.path),
      ).toBe(true);
  });

  it("answers every page, static file and route, by every method and credential, without a 5xx, content without credentials, or a secret", async () => {
    const failures: string[] = [];
    let sent = 0;
    for (const path of [...PAGES, ...STATIC, ...API_PATHS]) {
      const webhook = path.startsWith("/api/audit/webhook");
      for (const method of METHODS) {
        for (const [kind, authorization] of Object.entries(CREDENTIALS)) {
          const a = await send(method, path, authorization === undefined ? {} : { authorization });
          sent++;
          const what = `${method} ${path} with ${kind}: ${a.status}`;
          if (a.status >= 500) failures.push(`${what} ${a.body.slice(0, 200)}`);
          if (leaks(a).length > 0) failures.push(`${what} leaked a secret`);
          // Valid: the dashboard's credentials on its pages and API; the webhook's token only on the webhook, which this test never sends.
          const admitted = OPEN.has(path) || PUBLIC(path) || (authorization === RIGHT && !webhook);
          const content = a.status < 400 && !(a.status === 204 && a.body === "");
          if (!admitted && content) failures.push(`${what} answered with content without valid credentials`);
        }
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBe((PAGES.length + STATIC.length + API_PATHS.length) * METHODS.length * Object.keys(CREDENTIALS).length);
  }, 300_000);

  it("admits the webhook's token on the webhook only, and the dashboard's credentials everywhere else", async () => {
    const batch = { kind: "EventList", apiVersion: "audit.k8s.io/v1", items: [] };
    const post = (authorization: string) =>
      fetch(`${app.url}/api/audit/webhook/kind-dev`, {
        method: "POST",
        headers: { authorization, "content-type": "application/json" },
        body: JSON.stringify(batch),
      });
    expect((await post(`Bearer ${SECRETS.webhook}`)).status).toBe(200);
    expect((await post(RIGHT)).status).toBe(401);
    expect((await post("Bearer ")).status).toBe(401);
    expect((await fetch(`${app.url}/api/markers?from=now-1h`, { headers: { authorization: `Bearer ${SECRETS.bearer}` } })).status).toBe(200);
    expect((await fetch(`${app.url}/api/markers?from=now-1h`, { headers: { authorization: `Bearer ${SECRETS.webhook}` } })).status).toBe(401);
  });

  it("answers odd request targets and header tricks at once with a 4xx, never a 5xx nor protected content", async () => {
    for (const target of [
      "*",
      "http://evil.example/",
      "http://127.0.0.1/api/markers",
      "//api/markers",
      "/api/../api/markers",
      "/./api/markers",
      "/%2e%2e/api/markers",
      "/api/markers%00",
      "/api/%ZZ",
    ]) {
      for (const method of ["GET", "OPTIONS", "POST"]) {
        const { head, location } = await raw(`${method} ${target} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\nContent-Length: 0\r\n\r\n`);
        const status = Number(head.split(" ")[1]);
        // A refusal, or (Next's own normalising of `//`) a redirect to the same path on this server.
        const onPurpose = (status >= 400 && status < 500) || (status === 308 && /^\/[^/]/.test(location));
        expect([method, target, onPurpose], `${head} ${location}`).toEqual([method, target, true]);
      }
    }
    const tricks: Record<string, string>[] = [
      { "x-middleware-subrequest": "middleware:middleware:middleware:middleware:middleware" },
      { "x-middleware-subrequest": "src/middleware:proxy" },
      { "x-original-url": "/healthz" },
      { "x-rewrite-url": "/healthz" },
      { "x-forwarded-for": "127.0.0.1", "x-real-ip": "127.0.0.1" },
      { host: "localhost" },
      { "x-churnscope-user": "admin", "x-forwarded-user": "admin" },
    ];
    for (const trick of tricks) {
      for (const path of ["/", "/api/markers?from=now-1h", "/api/clients", "/metrics"]) {
        const a = await send("GET", path, trick);
        expect([path, JSON.stringify(trick), a.status]).toEqual([path, JSON.stringify(trick), 401]);
      }
    }
  });

  it("answers an upgrade at once and closes the connection", async () => {
    for (const path of ["/", "/api/markers", "/_next/webpack-hmr"]) {
      const { head, closedMs } = await raw(
        `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n\r\n`,
      );
      expect([path, head]).toEqual([path, "HTTP/1.1 400 Bad Request"]);
      expect(closedMs).toBeLessThan(5_000);
    }
  });

  it("takes no write from another site, nor a body a form can send, even with the browser's credentials", async () => {
    const note = (headers: Record<string, string>) =>
      fetch(`${app.url}/api/notes`, {
        method: "POST",
        headers: { authorization: RIGHT, ...headers },
        body: JSON.stringify({ timeMs: 1789000000000, text: "csrf" }),
      });
    expect((await note({ "content-type": "application/x-www-form-urlencoded" })).status).toBe(415);
    expect((await note({ "content-type": "text/plain" })).status).toBe(415);
    expect((await note({ "content-type": "application/json", "sec-fetch-site": "cross-site" })).status).toBe(403);
    expect((await note({ "content-type": "application/json", origin: "https://evil.example" })).status).toBe(403);
    for (const path of ["/api/snapshots", "/api/audit/uploads"]) {
      const res = await fetch(`${app.url}${path}`, {
        method: "POST",
        headers: { authorization: RIGHT, "content-type": "multipart/form-data; boundary=x" },
        body: "--x--",
      });
      expect([path, res.status]).toEqual([path, 415]);
    }
    expect((await note({ "content-type": "application/json", "sec-fetch-site": "same-origin", origin: app.url })).status).toBe(200);
  });
});

describe("secrets fail closed at startup", () => {
  async function exitOf(config: string, env: Record<string, string> = {}): Promise<{ code: number | null; output: string }> {
    const running = startCommand({ CHURNSCOPE_CONFIG: writeConfig(config), ...env });
    const timer = setTimeout(() => void running.stop(), 30_000);
    const [code] = (await once(running.child, "exit")) as [number | null];
    clearTimeout(timer);
    return { code, output: running.output() };
  }
  const file = (name: string, text: string) => {
    const path = join(mkdtempSync(join(tmpdir(), "churnscope-secret-")), name);
    writeFileSync(path, text);
    return path;
  };

  const cases: [string, () => string, Record<string, string>, RegExp][] = [
    [
      "a bearer token file holding only whitespace",
      () => `auth:\n  bearerToken: { file: ${file("t", " \n\t\n")} }\n`,
      {},
      /auth\.bearerToken\.file: .* is empty/,
    ],
    [
      "an empty basic-auth password file",
      () => `auth:\n  basicAuth: { username: sre, password: { file: ${file("p", "")} } }\n`,
      {},
      /auth\.basicAuth\.password\.file: .* is empty/,
    ],
    [
      "a webhook token variable holding only whitespace",
      () => `audit:\n  webhookToken: { env: HOOK }\n`,
      { HOOK: "   " },
      /audit\.webhookToken\.env: environment variable HOOK holds only whitespace/,
    ],
    [
      "an empty webhook token variable",
      () => `audit:\n  webhookToken: { env: HOOK }\n`,
      { HOOK: "" },
      /audit\.webhookToken\.env: environment variable HOOK is not set/,
    ],
    [
      "an empty Prometheus token file",
      () => `prometheus:\n  url: http://127.0.0.1:9\n  bearerToken: { file: ${file("prom", "\n")} }\n`,
      {},
      /prometheus\.bearerToken\.file: .* is empty/,
    ],
    [
      "a secret file that does not exist",
      () => `auth:\n  bearerToken: { file: ${join(tmpdir(), "churnscope-no-such-secret")} }\n`,
      {},
      /auth\.bearerToken\.file: cannot read/,
    ],
    [
      "a secret path that is a directory",
      () => `auth:\n  bearerToken: { file: ${mkdtempSync(join(tmpdir(), "churnscope-secret-dir-"))} }\n`,
      {},
      /auth\.bearerToken\.file: cannot read .*EISDIR/,
    ],
    [
      "a secret written in the file itself",
      () => `auth:\n  bearerToken: inline-secret\n`,
      {},
      /auth\.bearerToken: expected \{ env: NAME \} or \{ file: PATH \}/,
    ],
  ];
  it.each(cases)("stops for %s, naming the key", async (_what, config, env, message) => {
    const { code, output } = await exitOf(config(), env);
    expect(code).toBe(1);
    expect(output).toMatch(message);
    expect(output).not.toMatch(/ready on/);
  });
});
