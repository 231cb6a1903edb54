/**
 * Panel answers sent by the HTTP server itself (serve.cjs), before Next sees the request. Through Next,
 * a panel request paid about 3 ms of routing, proxy and compression at zlib's default level: more than
 * Prometheus takes to answer most panels. This path makes the same decisions as proxy.ts and the
 * route (app/api/panels/[id]/route.ts): the same access check, security headers, envelope and lib call.
 * Anything it does not recognise, Next answers as before; so does `next dev`, which has no serve.cjs.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { ApiFailure, badRequest, failureOf } from "../api/envelope";
import { envelopeOf } from "../api/respond";
import { answerPanel } from "./handlers/panels";
import { authorize, contentSecurityPolicy, newNonce, type HeaderReader } from "./access";
import { apiMethods } from "./api-routes";
import { AnswerCache, cacheHeaders, encodeAnswer, gzippedOf, notModified, type EncodedAnswer } from "./answer-cache";
import type { ServerContext } from "./context";
import { SECURITY_HEADERS } from "./security-headers";

/** Takes the request and answers it (true), or leaves it to Next (false). */
export type FastPath = (req: IncomingMessage, res: ServerResponse) => boolean;

/** serve.cjs reads the handler under this key: it is plain JavaScript and cannot import this module. */
const FAST_PATH_KEY = Symbol.for("churnscope.fastPath");

export function registerFastPath(handler: FastPath): void {
  (globalThis as Record<symbol, unknown>)[FAST_PATH_KEY] = handler;
}

const PANEL_PATH = /^\/api\/panels\/([^/]+)$/;
/** Smaller answers are sent as they are (the `compression` middleware Next uses has the same bound). */
const COMPRESS_FROM_BYTES = 1024;

/** Methods no route takes: Next answered TRACE with a bare 500. */
const REFUSED_METHODS = new Set(["TRACE", "TRACK", "CONNECT"]);

/**
 * What no route can take, answered here for every path with the envelope and the security headers:
 * Next's router answered a malformed %-escape in any dynamic segment (and TRACE) with a bare 500.
 */
function refusal(method: string | undefined, path: string): { failure: ApiFailure; allow?: string } | null {
  const verb = (method ?? "GET").toUpperCase();
  if (REFUSED_METHODS.has(verb)) return { failure: new ApiFailure(405, "method_not_allowed", `${verb} is not served here`) };
  for (const segment of path.split("/")) {
    if (!segment.includes("%")) continue;
    try {
      decodeURIComponent(segment);
    } catch {
      return { failure: badRequest("the path is not valid percent-encoding") };
    }
  }
  const methods = apiMethods(path);
  if (methods && verb !== "OPTIONS" && !methods.includes(verb)) {
    return { failure: new ApiFailure(405, "method_not_allowed", `${path.split("/").slice(0, 3).join("/")}… takes ${methods.filter((m) => m !== "HEAD").join(", ")}, not ${verb}`), allow: methods.join(", ") };
  }
  return null;
}

/** What every answer sent from here carries, as proxy.ts and next.config.ts give Next's. */
const jsonHeaders = (): Record<string, string> => ({ ...SECURITY_HEADERS, "Content-Security-Policy": contentSecurityPolicy(newNonce(), false), "Content-Type": "application/json" });

/** A failure's envelope, never kept by the browser. */
function sendFailure(res: ServerResponse, error: unknown, extra: Record<string, string> = {}): void {
  const { httpStatus, body } = failureOf(error);
  const payload = JSON.stringify(body);
  if (!res.headersSent) res.writeHead(httpStatus, { ...jsonHeaders(), "Cache-Control": "no-store", "Content-Length": String(Buffer.byteLength(payload)), ...extra });
  res.end(payload);
}

export function panelFastPath(context: () => ServerContext): FastPath {
  return (req, res) => {
    const url = req.url ?? "";
    const queryAt = url.indexOf("?");
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    const refused = refusal(req.method, path);
    if (refused) {
      sendFailure(res, refused.failure, refused.allow ? { Allow: refused.allow } : {});
      return true;
    }
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const match = PANEL_PATH.exec(path);
    if (!match) return false;
    let ctx: ServerContext;
    try {
      ctx = context();
    } catch {
      // Without a valid configuration, proxy.ts gives the answer that says so.
      return false;
    }
    const params = Object.fromEntries(new URLSearchParams(queryAt === -1 ? "" : url.slice(queryAt + 1)));
    void answer(ctx, cacheOf(ctx), req, res, path, match[1], params);
    return true;
  };
}

/** One cache per server context, kept as long as Prometheus's answers are reused. */
const caches = new WeakMap<ServerContext, AnswerCache>();
function cacheOf(ctx: ServerContext): AnswerCache {
  let cache = caches.get(ctx);
  if (!cache) caches.set(ctx, (cache = new AnswerCache(ctx.config.prometheus?.sharing.cacheMs ?? 10_000)));
  return cache;
}

async function answer(ctx: ServerContext, cache: AnswerCache, req: IncomingMessage, res: ServerResponse, path: string, encodedId: string, params: Record<string, string>) {
  const startedMs = performance.now();
  try {
    const access = authorize(ctx.config.auth, path, headersOf(req));
    let extra: Record<string, string> = {};
    // Access first, always; then an answer sent a moment ago for the same request, as it was encoded.
    let encoded: EncodedAnswer | undefined = access.ok ? cache.get(req.url ?? path) : undefined;
    if (!encoded) {
      const aborted = new AbortController();
      res.once("close", () => res.writableFinished || aborted.abort());
      const outcome = await envelopeOf(() => {
        if (!access.ok) throw new ApiFailure(access.status, "unauthorized", access.message);
        return answerPanel(ctx, panelId(encodedId), params, aborted.signal);
      });
      extra = outcome.headers;
      encoded = encodeAnswer(outcome.httpStatus, outcome.body);
      cache.set(req.url ?? path, encoded);
    }
    const headers: Record<string, string> = {
      ...jsonHeaders(),
      ...cacheHeaders(encoded),
      ...(!access.ok && access.challenge ? { "WWW-Authenticate": access.challenge } : {}),
      ...extra,
    };
    const compressible = encoded.plain.length >= COMPRESS_FROM_BYTES;
    if (compressible) headers.Vary = "Accept-Encoding";
    if (notModified(req.headers["if-none-match"], encoded)) {
      if (res.destroyed) return;
      res.writeHead(304, headers);
      res.end();
      return;
    }
    let payload = encoded.plain;
    if (compressible && acceptsGzip(req.headers["accept-encoding"])) {
      payload = gzippedOf(encoded);
      headers["Content-Encoding"] = "gzip";
    }
    headers["Content-Length"] = String(payload.length);
    // Shown in the browser's network panel: how much of a slow panel was this server's (Prometheus's wait included).
    headers["Server-Timing"] = `panel;dur=${(performance.now() - startedMs).toFixed(1)}`;
    if (res.destroyed) return;
    res.writeHead(encoded.httpStatus, headers);
    res.end(req.method === "HEAD" ? undefined : payload);
  } catch (error) {
    // Nothing above is expected to throw; if it does, the request still gets an answer and the process stays up.
    console.error("churnscope: unexpected error answering a panel", error);
    sendFailure(res, error);
  }
}

/** The id as named (refusal() has already turned away a malformed escape). */
const panelId = (encoded: string): string => decodeURIComponent(encoded);

/** node:http's headers as `authorize` reads them: one or two by name, so nothing is copied. */
function headersOf(req: IncomingMessage): HeaderReader {
  return {
    get: (name) => {
      const value = req.headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
    },
  };
}

/** Whether an Accept-Encoding header admits gzip: named, or `*`, and not with q=0. */
export function acceptsGzip(header: string | undefined): boolean {
  if (!header) return false;
  let gzipQ: number | undefined;
  let anyQ: number | undefined;
  for (const part of header.split(",")) {
    const [coding = "", ...attributes] = part.trim().toLowerCase().split(";");
    const qAttribute = attributes.map((a) => a.trim()).find((a) => a.startsWith("q="));
    const q = qAttribute === undefined ? 1 : Number(qAttribute.slice(2));
    if (coding.trim() === "gzip") gzipQ = q;
    else if (coding.trim() === "*") anyQ = q;
  }
  const q = gzipQ ?? anyQ ?? 0;
  return Number.isFinite(q) && q > 0;
}
