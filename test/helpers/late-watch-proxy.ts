/**
 * A plain-http proxy in front of a real API server for the recorder, which passes every request on and holds
 * each piece of a watch stream for `holdMs` before passing it on, in order: the recorder then learns of each
 * version that long after the API server made it, so an audit webhook batch reaches the dashboard first. The
 * hold can be changed while it runs; lists and other requests pass at once.
 */
import { createServer } from "node:http";
import { request } from "node:https";
import { freePort } from "./processes";

export interface LateWatchProxy {
  url: string;
  holdMs: number;
  stop(): Promise<void>;
}

export async function startLateWatchProxy(target: string, holdMs: number): Promise<LateWatchProxy> {
  const proxy: LateWatchProxy = { url: "", holdMs, stop: async () => {} };
  const sockets = new Set<import("node:net").Socket>();
  const server = createServer((req, res) => {
    const watch = /[?&]watch=(true|1)/.test(req.url ?? "");
    const out = request(
      new URL(req.url ?? "/", target),
      { method: req.method, headers: { ...req.headers, host: new URL(target).host }, rejectUnauthorized: false },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.headers);
        if (!watch) return answer.pipe(res);
        // Each piece leaves holdMs after it came, after every piece before it: the stream keeps its order.
        let chain = Promise.resolve();
        answer.on("data", (chunk: Buffer) => {
          const due = Date.now() + proxy.holdMs;
          chain = chain.then(() => new Promise((r) => setTimeout(r, Math.max(0, due - Date.now())))).then(() => void res.write(chunk));
        });
        answer.on("end", () => void chain.then(() => res.end()));
        answer.on("error", () => res.destroy());
      },
    );
    out.on("error", (error) => (res.headersSent ? res.destroy() : res.writeHead(502).end(String(error))));
    res.on("close", () => out.destroy());
    req.pipe(out);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.on("close", () => sockets.delete(socket));
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  proxy.url = `http://127.0.0.1:${port}`;
  proxy.stop = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      server.close(() => resolve());
    });
  return proxy;
}
