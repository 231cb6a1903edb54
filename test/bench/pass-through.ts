/** The peer every server-side benchmark here measures against: the least any server between browser and Prometheus costs. */
import { Agent, createServer, request, type Server } from "node:http";

/** Pipes each request to Prometheus and its answer back, unread: what any server in between costs at least. */
export async function startPassThrough(target: string): Promise<{ url: string; server: Server }> {
  const upstream = new URL(target);
  const agent = new Agent({ keepAlive: true });
  const server = createServer((req, res) => {
    const forward = request({ host: upstream.hostname, port: upstream.port, path: req.url, method: req.method, headers: req.headers, agent }, (answer) => {
      res.writeHead(answer.statusCode ?? 502, answer.headers);
      answer.pipe(res);
    });
    forward.on("error", () => res.writeHead(502).end());
    req.pipe(forward);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const address = server.address();
  return { url: `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}`, server };
}
