import { createServer, type IncomingMessage, type Server } from "node:http";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { loadConfig } from "@/lib/config/load";
import { buildContext, type ServerContext } from "@/lib/server/context";
import { acceptsGzip, panelFastPath } from "@/lib/server/panel-fast-path";

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

/** A server answering with the fast path where it takes a request, and 418 where it leaves it to Next. */
async function serve(context: () => ServerContext): Promise<string> {
  const fastPath = panelFastPath(context);
  return listen((req, res) => fastPath(req, res) || res.writeHead(418).end());
}

const context = (env: Record<string, string> = {}) => buildContext(loadConfig({ CHURNSCOPE_DATA_DIR: mkdtempSync(join(tmpdir(), "fast-path-")), ...env }));

describe("panelFastPath", () => {
  it("answers GET and HEAD of /api/panels/<id>, refuses methods no API route takes, and leaves the rest to Next", async () => {
    const ctx = context();
    const url = await serve(() => ctx);
    for (const path of ["/api/panels", "/api/panels/", "/api/panels/a/b", "/api/panelsx/a", "/api/markers", "//api/panels/a"]) {
      expect((await fetch(`${url}${path}`)).status, path).toBe(418);
    }
    // A method the route does not take: a 405 envelope that says which it takes.
    const posted = await fetch(`${url}/api/panels/writes-by-verb`, { method: "POST" });
    expect([posted.status, posted.headers.get("allow"), (await posted.json()).errorType]).toEqual([405, "GET, HEAD", "method_not_allowed"]);
    // A method the route takes is Next's.
    expect((await fetch(`${url}/api/notes`, { method: "POST" })).status).toBe(418);
    const taken = await fetch(`${url}/api/panels/writes-by-verb?from=now-1h`);
    expect(taken.status).not.toBe(418);
    expect((await taken.json()).status).toBe("error");
  });

  it("leaves the request to Next when there is no valid configuration", async () => {
    const url = await serve(() => {
      throw new Error("the configuration is not valid");
    });
    expect((await fetch(`${url}/api/panels/writes-by-verb`)).status).toBe(418);
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
      const pending = fetch(`${url}/api/panels/writes-by-resource?from=now-1h&to=now`, { signal: browser.signal }).then((r) => r.text(), (e: Error) => e.name);
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
