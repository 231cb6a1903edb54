/**
 * An HTTP proxy on loopback in front of a real Prometheus that records every API request it
 * forwards (path and PromQL) and can misbehave on purpose: delay, answer a proxy's HTML 503, or
 * add warnings to Prometheus's real answer, for all queries or those matching a pattern.
 */
import { createServer, type Server } from "node:http";
import { freePort } from "./processes";

export interface Fault {
  kind: "slow" | "html503" | "warnings";
  /** only queries whose PromQL matches; all when absent */
  match?: RegExp;
  delayMs?: number;
}

export interface CountingProxy {
  url: string;
  requests: { path: string; query: string; params: URLSearchParams }[];
  delayMs: number;
  fault?: Fault;
  stop(): Promise<void>;
}

export async function startCountingProxy(target: string): Promise<CountingProxy> {
  const proxy: CountingProxy = { url: "", requests: [], delayMs: 0, stop: async () => undefined };
  const server: Server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", async () => {
      const url = new URL(req.url ?? "/", "http://proxy");
      const params = new URLSearchParams(req.method === "POST" ? body : url.search);
      const query = params.get("query") ?? "";
      proxy.requests.push({ path: url.pathname, query, params });
      if (proxy.delayMs) await new Promise((r) => setTimeout(r, proxy.delayMs));
      const fault = proxy.fault && (!proxy.fault.match || proxy.fault.match.test(query)) ? proxy.fault : undefined;
      if (fault?.kind === "slow") await new Promise((r) => setTimeout(r, fault.delayMs ?? 5_000));
      if (fault?.kind === "html503") {
        res.writeHead(503, { "content-type": "text/html" }).end("<html><body><h1>503 Service Temporarily Unavailable</h1><hr>nginx</body></html>");
        return;
      }
      try {
        const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers: { "content-type": req.headers["content-type"] ?? "application/x-www-form-urlencoded" }, body: req.method === "POST" ? body : undefined });
        let text = await upstream.text();
        if (fault?.kind === "warnings") text = JSON.stringify({ ...JSON.parse(text), warnings: ["store eu-1 unreachable: partial data"] });
        res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" }).end(text);
      } catch {
        if (!res.headersSent) res.writeHead(502).end("proxy: upstream failed");
      }
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${port}`;
  proxy.stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return proxy;
}
