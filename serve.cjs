/**
 * The HTTP server that `npm start` and the container image run: Next's own request handler, except
 * that the API pipeline the app registers at startup (instrumentation.ts → lib/server/node-api.ts)
 * answers /api/* first. Through Next's routing an API request paid about 3 ms, more than Prometheus
 * takes to answer most panels. Pages are Next's, as under `next start`.
 *
 * Plain JavaScript, so the standalone image runs it without a build step. It serves the app in its
 * working directory; PORT, HOSTNAME and KEEP_ALIVE_TIMEOUT are read as Next's standalone server.js
 * reads them. With TLS_PORT, TLS_CERT_FILE and TLS_KEY_FILE it also serves the same app over https.
 */
const { createServer, get } = require("node:http");
const https = require("node:https");
const { existsSync, readFileSync } = require("node:fs");
const { join } = require("node:path");

process.env.NODE_ENV = "production";
const dir = process.cwd();
const port = Number.parseInt(process.env.PORT ?? "", 10) || 3000;
const hostname = process.env.HOSTNAME || "0.0.0.0";
// Milliseconds an idle kept-alive connection stays open. It must outlast every client's and proxy's own idle timeout
// (Node's fetch 4 s, nginx and cloud load balancers 60 s): a server that closes first races the next request sent on
// the connection, which then fails ("other side closed", a proxy's 502). Node's own default is 5 s; ours is 65 s.
const DEFAULT_KEEP_ALIVE_MS = 65_000;
const keepAliveFromEnv = Number.parseInt(process.env.KEEP_ALIVE_TIMEOUT ?? "", 10);
const keepAliveTimeout = Number.isFinite(keepAliveFromEnv) && keepAliveFromEnv >= 0 ? keepAliveFromEnv : DEFAULT_KEEP_ALIVE_MS;

// The standalone output has no next.config.ts: like Next's server.js, use the copy the build wrote.
if (!process.env.__NEXT_PRIVATE_STANDALONE_CONFIG && !existsSync(join(dir, "next.config.ts"))) {
  const serverFiles = join(dir, process.env.CHURNSCOPE_DIST_DIR || ".next", "required-server-files.json");
  process.env.__NEXT_PRIVATE_STANDALONE_CONFIG = JSON.stringify(JSON.parse(readFileSync(serverFiles, "utf8")).config);
}

const next = require("next");
const API_HANDLER_KEY = Symbol.for("churnscope.api");

/** Whether the registered API pipeline took the request; if it fails before answering, Next answers instead. */
function answeredBeforeNext(req, res) {
  const api = globalThis[API_HANDLER_KEY];
  if (typeof api !== "function") return false;
  try {
    return api(req, res);
  } catch (error) {
    console.error(`churnscope: the API pipeline failed on ${req.url}; Next answers it`, error);
    return false;
  }
}

const server = createServer();
const listeners = [{ server, port, scheme: "http" }];
const tlsPort = Number.parseInt(process.env.TLS_PORT ?? "", 10);
if (tlsPort) {
  let credentials;
  try {
    credentials = { cert: readFileSync(process.env.TLS_CERT_FILE ?? ""), key: readFileSync(process.env.TLS_KEY_FILE ?? "") };
  } catch (error) {
    console.error(`churnscope: cannot read server.tls certFile or keyFile: ${error.message}`);
    process.exit(1);
  }
  listeners.push({ server: https.createServer(credentials), port: tlsPort, scheme: "https" });
}
for (const l of listeners) l.server.keepAliveTimeout = keepAliveTimeout;
const app = next({ dev: false, dir, hostname, port, httpServer: server });

/**
 * Next loads its route modules and middleware on the first requests after it starts (about a second of the event
 * loop on 2 cores): sent here first, over a private loopback port, so that the first request a client sends (an
 * API server retrying its audit batches after a restart) is not held behind them. Until then the ports are closed.
 */
async function warmUp(onRequest) {
  const warm = createServer(onRequest);
  await new Promise((resolve) => warm.listen(0, "127.0.0.1", resolve));
  await new Promise((resolve) => {
    const request = get(`http://127.0.0.1:${warm.address().port}/healthz`, { timeout: 10_000 }, (answer) => answer.resume().on("end", resolve));
    request.on("timeout", () => request.destroy(new Error("no answer in 10 s")));
    request.on("error", (error) => {
      console.error(`churnscope: warming up: ${error.message}`);
      resolve();
    });
  });
  warm.closeAllConnections();
  await new Promise((resolve) => warm.close(resolve));
}

app.prepare().then(
  async () => {
    const handle = app.getRequestHandler();
    const onRequest = (req, res) => {
      if (answeredBeforeNext(req, res)) return;
      // As Next's own server does: a failure it did not answer is a logged 500, not an unhandled rejection.
      handle(req, res).catch((error) => {
        console.error(`churnscope: failed to handle a request for ${req.url}`, error);
        if (!res.headersSent) res.statusCode = 500;
        res.end();
      });
    };
    await warmUp(onRequest);
    for (const l of listeners) {
      l.server.on("request", onRequest);
      // Nothing here speaks WebSocket or any other upgraded protocol: say so and close, rather than hold the socket.
      l.server.removeAllListeners("upgrade");
      l.server.on("upgrade", (req, socket) => socket.end("HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"));
      l.server.on("error", (error) => {
        console.error(`churnscope: the server cannot listen on ${hostname}:${l.port}: ${error.message}`);
        process.exit(1);
      });
      l.server.listen(l.port, hostname, () => console.log(`churnscope: ready on ${l.scheme}://${hostname}:${l.port}`));
    }
  },
  (error) => {
    console.error("churnscope: the server did not start", error);
    process.exit(1);
  },
);

// As under `next start`: stop taking connections, let requests in flight finish, then close Next. A request that
// does not finish within SHUTDOWN_GRACE_MS (a snapshot check, a slow panel) does not keep the process from stopping.
const EXIT_CODES = { SIGINT: 130, SIGTERM: 143 };
const shutdownGraceMs = Number.parseInt(process.env.SHUTDOWN_GRACE_MS ?? "", 10) || 10_000;
let closing = false;
for (const [signal, code] of Object.entries(EXIT_CODES)) {
  process.on(signal, () => {
    if (closing) return;
    closing = true;
    setTimeout(() => {
      console.error(`churnscope: requests still running ${shutdownGraceMs / 1000} s after ${signal}; stopping anyway`);
      process.exit(code);
    }, shutdownGraceMs).unref();
    let open = listeners.length;
    for (const l of listeners) {
      l.server.close(() => --open === 0 && void app.close().finally(() => process.exit(code)));
      l.server.closeIdleConnections?.();
    }
  });
}
