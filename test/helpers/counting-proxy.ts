/**
 * An HTTP proxy on loopback in front of a real Prometheus that records every API request it
 * forwards (path and PromQL) and can delay them, so a test can count what reaches Prometheus.
 */
import { createServer, type Server } from "node:http";
import { freePort } from "./processes";

export interface CountingProxy {
  url: string;
  requests: { path: string; query: string; params: URLSearchParams }[];
  delayMs: number;
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
      proxy.requests.push({ path: url.pathname, query: params.get("query") ?? "", params });
      if (proxy.delayMs) await new Promise((r) => setTimeout(r, proxy.delayMs));
      try {
        const upstream = await fetch(`${target}${req.url}`, { method: req.method, headers: { "content-type": req.headers["content-type"] ?? "application/x-www-form-urlencoded" }, body: req.method === "POST" ? body : undefined });
        res.writeHead(upstream.status, { "content-type": upstream.headers.get("content-type") ?? "application/json" }).end(await upstream.text());
      } catch {
        res.writeHead(502).end("proxy: upstream failed");
      }
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${port}`;
  proxy.stop = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return proxy;
}
