/**
 * A wire-level stand-in for kube-apiserver, for recorder tests only (never shipped): list and
 * watch for resources, streaming lists (served, refused or ignored), watch events as chunked JSON lines, bookmarks, 410 Gone for a compacted
 * resourceVersion (as an ERROR event, like the real server), and injected faults: dropped
 * connections and a restart on the same port. The recorder talks to it through client-node.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { Socket } from "node:net";
import { KubeConfig } from "@kubernetes/client-node";

interface Event {
  rv: number;
  path: string;
  /** ADDED, MODIFIED or DELETED, or anything emitRaw sends */
  type: string;
  object: unknown;
}

export class FakeApiServer {
  private server: Server | null = null;
  private readonly sockets = new Set<Socket>();
  private readonly watchers = new Set<{ path: string; res: ServerResponse }>();
  private readonly events: Event[] = [];
  private readonly current = new Map<string, Map<string, Record<string, unknown>>>();
  private rv = 1000;
  private compactedThrough = 0;
  private bookmarkTimer: NodeJS.Timeout | null = null;
  port = 0;
  /** every list and watch request, for assertions */
  readonly requests: string[] = [];

  /**
   * `streamingLists`: serve sendInitialEvents watches as the real server does; refuse them with 422, as a
   * server with WatchList off does; or ignore the parameter, as servers before 1.27 do (a watch from
   * "now" then: every current object as ADDED, then changes and bookmarks, and no end of the list).
   */
  constructor(
    private readonly bookmarkEveryMs = 200,
    private readonly streamingLists: "serve" | "refuse" | "ignore" = "serve",
  ) {}

  async start(port = 0): Promise<void> {
    this.server = createServer((req, res) => this.handle(req, res));
    this.server.on("connection", (socket) => {
      this.sockets.add(socket);
      socket.on("close", () => this.sockets.delete(socket));
    });
    await new Promise<void>((resolve) => this.server!.listen(port, "127.0.0.1", resolve));
    this.port = (this.server.address() as { port: number }).port;
    this.bookmarkTimer = setInterval(() => this.bookmark(), this.bookmarkEveryMs);
  }

  async stop(): Promise<void> {
    if (this.bookmarkTimer) clearInterval(this.bookmarkTimer);
    this.dropConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
    this.server = null;
  }

  /**
   * A restart: every connection goes, and the server comes back on the same port with the same data.
   * Like kube-apiserver, which writes its own objects as it starts and whose watch cache starts again
   * at the current version, it answers a watch from any version seen before with 410 Gone.
   */
  async restart(downMs = 300): Promise<void> {
    const port = this.port;
    await this.stop();
    this.rv++;
    this.compact();
    await new Promise((r) => setTimeout(r, downMs));
    await this.start(port);
  }

  dropConnections(): void {
    for (const w of this.watchers) w.res.destroy();
    this.watchers.clear();
    for (const s of this.sockets) s.destroy();
  }

  /** Forget history up to the current version: watches from before it get 410 Gone. */
  compact(): void {
    this.compactedThrough = this.rv;
  }

  /** A kubeconfig for this server, as the recorder reads one. */
  kubeConfig(): KubeConfig {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "f", server: `http://127.0.0.1:${this.port}`, skipTLSVerify: true }],
      users: [{ name: "u", token: "t" }],
      contexts: [{ name: "f", cluster: "f", user: "u" }],
      currentContext: "f",
    });
    return kc;
  }

  get resourceVersion(): number {
    return this.rv;
  }

  /** Applies a change and streams it to open watches; returns the version it got. */
  emit(path: string, type: Event["type"], object: Record<string, unknown>): number {
    const rv = ++this.rv;
    const meta: Record<string, unknown> = { ...(object.metadata as Record<string, unknown>), resourceVersion: String(rv) };
    const stored = { ...object, metadata: meta };
    const objects = this.current.get(path) ?? new Map();
    const key = `${String(meta.namespace ?? "")}/${String(meta.name)}`;
    if (type === "DELETED") objects.delete(key);
    else objects.set(key, stored);
    this.current.set(path, objects);
    const event = { rv, path, type, object: stored };
    this.events.push(event);
    for (const w of this.watchers) if (w.path === path) w.res.write(`${JSON.stringify({ type, object: stored })}\n`);
    return rv;
  }

  /** Streams an event exactly as given (a null object, a nameless one, an unknown type), as a proxy that mangles the stream might; it is replayed like any other. */
  emitRaw(path: string, type: string, object: unknown): number {
    const rv = ++this.rv;
    this.events.push({ rv, path, type, object });
    for (const w of this.watchers) if (w.path === path) w.res.write(`${JSON.stringify({ type, object })}\n`);
    return rv;
  }

  private bookmark(): void {
    for (const w of this.watchers)
      w.res.write(`${JSON.stringify({ type: "BOOKMARK", object: { kind: "Bookmark", metadata: { resourceVersion: String(this.rv) } } })}\n`);
  }

  private handle(req: IncomingMessage, res: ServerResponse): void {
    const url = new URL(req.url ?? "/", "http://x");
    this.requests.push(`${url.pathname}${url.search}`);
    const objects = this.current.get(url.pathname);
    if (!objects && !this.events.some((e) => e.path === url.pathname)) {
      res.writeHead(404, { "Content-Type": "application/json" }).end(JSON.stringify({ kind: "Status", code: 404, reason: "NotFound" }));
      return;
    }
    if (url.searchParams.get("watch") !== "true") {
      res.writeHead(200, { "Content-Type": "application/json" });
      // As the real server lists: items without kind and apiVersion (watch events carry them).
      const items = [...(objects?.values() ?? [])].map(({ kind: _kind, apiVersion: _apiVersion, ...item }) => item);
      res.end(JSON.stringify({ kind: "List", apiVersion: "v1", metadata: { resourceVersion: String(this.rv) }, items }));
      return;
    }
    if (url.searchParams.get("sendInitialEvents") === "true") {
      if (this.streamingLists === "refuse") {
        res.writeHead(422, { "Content-Type": "application/json" }).end(
          JSON.stringify({
            kind: "Status",
            code: 422,
            reason: "Invalid",
            message: "sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled",
          }),
        );
        return;
      }
      // A streaming list: every current object as ADDED, then a bookmark that ends them, then live events.
      res.writeHead(200, { "Content-Type": "application/json", "Transfer-Encoding": "chunked" });
      for (const object of objects?.values() ?? []) res.write(`${JSON.stringify({ type: "ADDED", object })}\n`);
      if (this.streamingLists === "serve")
        res.write(
          `${JSON.stringify({ type: "BOOKMARK", object: { kind: "Bookmark", metadata: { resourceVersion: String(this.rv), annotations: { "k8s.io/initial-events-end": "true" } } } })}\n`,
        );
      const watcher = { path: url.pathname, res };
      this.watchers.add(watcher);
      res.on("close", () => this.watchers.delete(watcher));
      return;
    }
    const from = Number(url.searchParams.get("resourceVersion") ?? "0");
    res.writeHead(200, { "Content-Type": "application/json", "Transfer-Encoding": "chunked" });
    if (from < this.compactedThrough) {
      res.end(
        `${JSON.stringify({ type: "ERROR", object: { kind: "Status", code: 410, reason: "Expired", message: `too old resource version: ${from} (${this.compactedThrough})` } })}\n`,
      );
      return;
    }
    for (const e of this.events) if (e.path === url.pathname && e.rv > from) res.write(`${JSON.stringify({ type: e.type, object: e.object })}\n`);
    const watcher = { path: url.pathname, res };
    this.watchers.add(watcher);
    res.on("close", () => this.watchers.delete(watcher));
  }
}
