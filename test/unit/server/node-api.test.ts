import { createServer, type IncomingMessage, type Server } from "node:http";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadConfig } from "@/lib/config/load";
import { buildContext, type ServerContext } from "@/lib/server/context";
import { acceptsGzip } from "@/lib/server/api";
import { nodeApi } from "@/lib/server/node-api";

describe("acceptsGzip", () => {
  it.each([
    [undefined, false],
    ["", false],
    ["gzip", true],
    ["GZIP", true],
    ["deflate, gzip;q=0.5", true],
    ["br, deflate", false],
    ["gzip;q=0", false],
    ["gzip; q=0.0, *", false],
    ["*", true],
    ["*;q=0", false],
    ["identity, *;q=0.1", true],
    ["gzip;q=abc", false],
  ])("%j → %s", (header, accepted) => {
    expect(acceptsGzip(header)).toBe(accepted);
  });
});

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise((resolve) => s.close(resolve).closeAllConnections())));
});

async function listen(handler: (req: IncomingMessage, res: import("node:http").ServerResponse) => void): Promise<string> {
  const server = createServer(handler);
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`;
}

/** A server answering with the API pipeline where it takes a request, and 418 where it leaves it to Next. */
async function serve(context: () => ServerContext): Promise<string> {
  const api = nodeApi(context);
  return listen((req, res) => api(req, res) || res.writeHead(418).end());
}

const context = (env: Record<string, string> = {}) => buildContext(loadConfig({ CHURNSCOPE_DATA_DIR: mkdtempSync(join(tmpdir(), "fast-path-")), ...env }));

describe("nodeApi", () => {
  it("answers every /api/* request, each the way its route takes it, and leaves pages to Next", async () => {
    const ctx = context();
    const url = await serve(() => ctx);
    for (const path of ["/", "/objects", "/apix", "//api/panels/a"]) expect((await fetch(`${url}${path}`)).status, path).toBe(418);
    for (const path of ["/api/panels", "/api/panels/a/b", "/api/panelsx/a", "/api/nope"]) {
      const res = await fetch(`${url}${path}`);
      expect([path, res.status, (await res.json()).errorType]).toEqual([path, 404, "not_found"]);
    }
    // A method the route does not take: a 405 envelope that says which it takes.
    const posted = await fetch(`${url}/api/panels/writes-by-verb`, { method: "POST" });
    expect([posted.status, posted.headers.get("allow"), (await posted.json()).errorType]).toEqual([405, "GET, HEAD", "method_not_allowed"]);
    const options = await fetch(`${url}/api/markers`, { method: "OPTIONS" });
    expect([options.status, options.headers.get("allow")]).toEqual([204, "GET, HEAD, OPTIONS"]);
    // A body reaches its handler: a note that is not one is the client's error.
    const note = await fetch(`${url}/api/notes`, { method: "POST", headers: { "Content-Type": "application/json" }, body: "not json" });
    expect([note.status, (await note.json()).error]).toEqual([400, 'the body is not JSON: send {"timeMs": <epoch ms>, "text": "…"}']);
    const panel = await fetch(`${url}/api/panels/writes-by-resource?from=now-1h`);
    expect([panel.status, (await panel.json()).errorType]).toEqual([503, "not_configured"]);
    const head = await fetch(`${url}/api/panels/writes-by-resource?from=now-1h`, { method: "HEAD" });
    expect([head.status, await head.text()]).toEqual([503, ""]);
    for (const res of [posted, options, note, panel, head]) expect(res.headers.get("x-frame-options")).toBe("DENY");
  });

  it("answers every API with 503 while there is no valid configuration, and leaves pages to Next", async () => {
    const url = await serve(() => {
      throw new Error("the configuration is not valid");
    });
    const res = await fetch(`${url}/api/panels/writes-by-verb`);
    expect([res.status, (await res.json()).errorType]).toEqual([503, "not_ready"]);
    expect((await fetch(`${url}/`)).status).toBe(418);
  });

  it("takes a browser going away mid-answer as no error, and answers the next request", async () => {
    let queryArrived!: () => void;
    const arrived = new Promise<void>((resolve) => (queryArrived = resolve));
    // A Prometheus that takes a query and never answers it.
    const prometheus = await listen(() => queryArrived());
    const ctx = context({ PROMETHEUS_URL: prometheus });
    const url = await serve(() => ctx);
    const errors = vi.spyOn(console, "error");
    try {
      const browser = new AbortController();
      const pending = fetch(`${url}/api/panels/writes-by-resource?from=now-1h&to=now`, { signal: browser.signal }).then(
        (r) => r.text(),
        (e: Error) => e.name,
      );
      await arrived;
      browser.abort();
      expect(await pending).toBe("AbortError");
      const next = await fetch(`${url}/api/panels/nope`);
      expect(next.status).toBe(404);
      expect(errors).not.toHaveBeenCalled();
    } finally {
      errors.mockRestore();
    }
  });
});
