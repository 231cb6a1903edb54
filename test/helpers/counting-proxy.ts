/**
 * An HTTP proxy on loopback in front of a real Prometheus that records every API request it
 * forwards (path and PromQL) and can misbehave on purpose, for all queries or those matching a
 * pattern: delay, answer a proxy's HTML 503, add warnings to Prometheus's real answer, or answer
 * what no Prometheus should (an error envelope, nothing, junk, data of the wrong shape, a valid
 * answer of `hugeMiB` that keeps coming, one cut off midway, a redirect).
 */
import { createServer, type Server, type ServerResponse } from "node:http";
import { freePort } from "./processes";

export interface Fault {
  kind: "slow" | "html503" | "warnings" | "error-json" | "empty" | "junk" | "data-null" | "wrong-shape" | "huge" | "cut" | "redirect";
  /** for "huge": how much to stream */
  hugeMiB?: number;
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

const JSON_TYPE = { "content-type": "application/json" };

/** Answers with the fault itself when it replaces Prometheus's answer; false when the real answer is needed. */
function answerFault(fault: Fault, res: ServerResponse): boolean {
  switch (fault.kind) {
    case "error-json":
      res
        .writeHead(422, JSON_TYPE)
        .end(JSON.stringify({ status: "error", errorType: "execution", error: "query processing would load too many samples into memory" }));
      return true;
    case "empty":
      res.writeHead(200, JSON_TYPE).end("");
      return true;
    case "junk":
      res.writeHead(200, JSON_TYPE).end("\u0000\u0001 not json at all }{");
      return true;
    case "data-null":
      res.writeHead(200, JSON_TYPE).end('{"status":"success","data":null}');
      return true;
    case "wrong-shape":
      res.writeHead(200, JSON_TYPE).end('{"status":"success","data":{"resultType":"matrix","result":[{"metric":{"job":"x"},"values":"not samples"}]}}');
      return true;
    case "redirect":
      res.writeHead(302, { location: "http://10.0.0.1:9090/api/v1/query_range" }).end();
      return true;
    case "cut":
      res.writeHead(200, { ...JSON_TYPE, "content-length": "100000" });
      res.write('{"status":"success","data":{"resultType":"matrix","result":[{"metric":{},"values":[[1,"1"],');
      setTimeout(() => res.socket?.destroy(), 50);
      return true;
    case "huge": {
      // A valid matrix that keeps coming, without a length: only counting what arrives can stop it.
      res.writeHead(200, JSON_TYPE);
      res.write('{"status":"success","data":{"resultType":"matrix","result":[');
      const chunk = '{"metric":{"resource":"connectors"},"values":[[1788912000,"1"]]},'.repeat(16_000);
      const total = (fault.hugeMiB ?? 64) * 1024 * 1024;
      let sent = 0;
      const more = () => {
        if (res.destroyed) return;
        if (sent >= total) return void res.end('{"metric":{},"values":[]}]}}');
        sent += chunk.length;
        res.write(chunk, () => setImmediate(more));
      };
      more();
      return true;
    }
    default:
      return false;
  }
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
      if (fault && answerFault(fault, res)) return;
      try {
        const upstream = await fetch(`${target}${req.url}`, {
          method: req.method,
          headers: { "content-type": req.headers["content-type"] ?? "application/x-www-form-urlencoded" },
          body: req.method === "POST" ? body : undefined,
        });
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
  proxy.stop = () =>
    new Promise<void>((resolve) => {
      server.close(() => resolve());
      // An API server's webhook keeps its connection alive and busy retrying: closing waits for no connection.
      server.closeAllConnections();
    });
  return proxy;
}
