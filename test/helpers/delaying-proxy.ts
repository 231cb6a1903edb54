/**
 * A TLS proxy in front of the dashboard's audit webhook that holds every other request (or, with `holdEvery`, every
 * one, every third, …) for a while before passing it on, so a real API server's batches reach the dashboard out of
 * order, as they do from a busy API server (it posts each batch from a goroutine of its own, and a slow answer lets
 * the next one overtake it), or after the watch recorder saw the same writes. The hold can be changed while it
 * runs. It counts the batches that reached the dashboard after a later one.
 */
import { readFileSync } from "node:fs";
import { createServer, request } from "node:https";
import { freePort } from "./processes";

export interface DelayingProxy {
  url: string;
  /**
   * where batches go: settable, for a receiver started after the API server that posts to this proxy; several, and
   * batches go to each in turn, as a Service spreads them over replicas
   */
  target: string | string[];
  holdMs: number;
  /** which requests are held: every one (1), every other (2, the default), every third (3), … */
  holdEvery: number;
  /**
   * batches passed on, and how many of them held an event received before the last event of a batch passed on earlier;
   * the dashboard's answer times (ms, from passing the batch on to the answer's end) and the events the batches held
   */
  stats: { forwarded: number; overtaken: number; answerMs: number[]; events: number; byTarget: Map<string, number> };
  stop(): Promise<void>;
}

/** The latest and earliest requestReceivedTimestamp of a batch's events, and how many it holds. */
function span(body: Buffer): { first: number; last: number; events: number } | undefined {
  try {
    const items = (JSON.parse(body.toString("utf8")) as { items?: { requestReceivedTimestamp?: string }[] }).items ?? [];
    const times = items.map((e) => Date.parse(e.requestReceivedTimestamp ?? "")).filter((t) => !Number.isNaN(t));
    return times.length === 0 ? undefined : { first: Math.min(...times), last: Math.max(...times), events: items.length };
  } catch {
    return undefined;
  }
}

export async function startDelayingProxy(target: string | string[], tls: { certFile: string; keyFile: string }, holdMs: number): Promise<DelayingProxy> {
  const ca = readFileSync(tls.certFile);
  const stats = { forwarded: 0, overtaken: 0, answerMs: [] as number[], events: 0, byTarget: new Map<string, number>() };
  const proxy = { holdMs, holdEvery: 2, target };
  let arrived = 0;
  let latestPassed = -Infinity;
  const server = createServer({ cert: ca, key: readFileSync(tls.keyFile) }, (req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (chunk: Buffer) => chunks.push(chunk));
    req.on("end", () => {
      const body = Buffer.concat(chunks);
      const hold = arrived++ % proxy.holdEvery === 0 ? proxy.holdMs : 0;
      setTimeout(() => {
        const times = span(body);
        if (times) {
          if (times.first < latestPassed) stats.overtaken++;
          latestPassed = Math.max(latestPassed, times.last);
        }
        const targets = typeof proxy.target === "string" ? [proxy.target] : proxy.target;
        const to = targets[stats.forwarded % targets.length];
        stats.forwarded++;
        stats.byTarget.set(to, (stats.byTarget.get(to) ?? 0) + 1);
        stats.events += times?.events ?? 0;
        const sentMs = performance.now();
        const out = request(new URL(req.url ?? "/", to), { method: req.method, headers: req.headers, ca }, (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.headers);
          answer.on("end", () => stats.answerMs.push(performance.now() - sentMs));
          answer.pipe(res);
        });
        out.on("error", (error) => res.writeHead(502).end(String(error)));
        out.end(body);
      }, hold);
    });
  });
  const port = await freePort();
  await new Promise<void>((resolve) => server.listen(port, "127.0.0.1", resolve));
  return Object.assign(proxy, {
    url: `https://127.0.0.1:${port}`,
    stats,
    stop: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        // An API server's webhook keeps its connection alive and busy retrying: closing waits for no connection.
        server.closeAllConnections();
      }),
  });
}
