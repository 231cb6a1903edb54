/**
 * Every /api/* request goes through here, whichever server received it (serve.cjs through
 * node-api.ts, `next dev` through the catch-all route): what no route takes, access, the route's
 * one handler call, the envelope, the security headers and policy, ETags for panels, compression
 * and Server-Timing are decided once, for every route alike.
 */
import { gzipSync } from "node:zlib";
import { ApiFailure, badRequest, failureOf, notFound } from "../api/envelope";
import { envelopeOf } from "../api/respond";
import { authorize, contentSecurityPolicy, newNonce } from "./access";
import { AnswerCache, cacheHeaders, encodeAnswer, gzippedOf, notModified, type EncodedAnswer } from "./answer-cache";
import type { ApiRequest } from "./api-request";
import { apiMethods, findRoute, type ApiCall, type ApiRoute } from "./api-routes";
import type { ServerContext } from "./context";
import type { Download } from "./handlers/export-view";
import { crossSiteRefusal, pageRefusal } from "./request-guard";
import { SECURITY_HEADERS } from "./security-headers";

/** An answer as either server sends it. */
export interface ApiResponse {
  status: number;
  headers: Record<string, string>;
  /** null for HEAD, 304 and OPTIONS */
  body: Uint8Array | null;
}

/** Smaller answers are sent as they are (the `compression` middleware Next uses has the same bound). */
const COMPRESS_FROM_BYTES = 1024;

/** Methods no route takes: Next answered TRACE with a bare 500. */
const REFUSED_METHODS = new Set(["TRACE", "TRACK", "CONNECT"]);

/** What every answer carries, as next.config.ts and proxy.ts give pages. */
const baseHeaders = (development: boolean): Record<string, string> => ({
  ...SECURITY_HEADERS,
  "Content-Security-Policy": contentSecurityPolicy(newNonce(), development),
});

const development = () => process.env.NODE_ENV === "development";

/** A failure's envelope, never kept by the browser. */
export function failureResponse(error: unknown, extra: Record<string, string> = {}): ApiResponse {
  const { httpStatus, body } = failureOf(error);
  return {
    status: httpStatus,
    headers: { ...baseHeaders(development()), "Content-Type": "application/json", "Cache-Control": "no-store", ...extra },
    body: Buffer.from(JSON.stringify(body)),
  };
}

/**
 * What no route can take, for every path (pages too): Next's router answered a malformed %-escape in
 * any dynamic segment, TRACE, and methods other than GET and HEAD on static files with a bare 500; Next's
 * internal pages; and an API route asked with a method it does not take.
 */
export function refusal(method: string, path: string): ApiResponse | null {
  if (REFUSED_METHODS.has(method)) return failureResponse(new ApiFailure(405, "method_not_allowed", `${method} is not served here`));
  const page = pageRefusal(method, path);
  if (page) return failureResponse(page.failure, page.headers);
  for (const segment of path.split("/")) {
    if (!segment.includes("%")) continue;
    try {
      decodeURIComponent(segment);
    } catch {
      return failureResponse(badRequest("the path is not valid percent-encoding"));
    }
  }
  const methods = apiMethods(path);
  if (methods && method !== "OPTIONS" && !methods.includes(method)) {
    const what = `${path.split("/").slice(0, 3).join("/")}… takes ${methods.filter((m) => m !== "HEAD").join(", ")}, not ${method}`;
    return failureResponse(new ApiFailure(405, "method_not_allowed", what), { Allow: methods.join(", ") });
  }
  return null;
}

/** A snapshot's answers never change: they are kept this long (the cache's bound on entries still holds). */
const SNAPSHOT_ANSWER_MS = 3_600_000;

/**
 * Per server context, one cache of panel answers, kept as long as Prometheus's answers are reused, and one of
 * snapshots' answers.
 */
const caches = new WeakMap<ServerContext, { panels: AnswerCache; snapshots: AnswerCache }>();
function cacheOf(ctx: ServerContext, route: ApiRoute, query: URLSearchParams): AnswerCache | undefined {
  let held = caches.get(ctx);
  if (!held)
    caches.set(ctx, (held = { panels: new AnswerCache(ctx.config.prometheus?.sharing.cacheMs ?? 10_000), snapshots: new AnswerCache(SNAPSHOT_ANSWER_MS) }));
  if (route.shared === true) return held.panels;
  return route.shared === "snapshot" && query.has("snapshot") ? held.snapshots : undefined;
}

/**
 * The answer to one API request. It never throws: whatever goes wrong is an envelope with the headers.
 * Server-Timing shows in the browser's network panel how much of a slow answer was this server's.
 */
export async function handleApi(context: () => ServerContext, request: ApiRequest, options: { compress: boolean } = { compress: true }): Promise<ApiResponse> {
  const startedMs = performance.now();
  const response = await answerRequest(context, request, options.compress);
  response.headers["Server-Timing"] = `api;dur=${(performance.now() - startedMs).toFixed(1)}`;
  return response;
}

async function answerRequest(context: () => ServerContext, request: ApiRequest, compress: boolean): Promise<ApiResponse> {
  try {
    const url = new URL(request.url, "http://localhost");
    const path = url.pathname;
    const method = request.method.toUpperCase();
    const refused = refusal(method, path);
    if (refused) return refused;
    let ctx: ServerContext;
    try {
      ctx = context();
    } catch {
      return failureResponse(new ApiFailure(503, "not_ready", "the configuration is not valid; see the server log"));
    }
    const found = findRoute(path);
    let user: string | undefined;
    // Access first, for any path but the webhook's: what is not served here is for users to learn.
    if (found?.route.access !== "webhook") {
      const access = authorize(ctx.config.auth, path, request.headers);
      if (!access.ok)
        return failureResponse(new ApiFailure(access.status, "unauthorized", access.message), access.challenge ? { "WWW-Authenticate": access.challenge } : {});
      user = access.user;
    }
    if (!found) return failureResponse(notFound(`no API at ${path.slice(0, 100)}`));
    const crossSite = found.route.access === "user" ? crossSiteRefusal(method, request.headers) : null;
    if (crossSite) return failureResponse(crossSite);
    if (method === "OPTIONS")
      return { status: 204, headers: { ...baseHeaders(development()), Allow: [...(apiMethods(path) ?? []), "OPTIONS"].join(", ") }, body: null };
    const { route, captured } = found;
    const call: ApiCall = { ctx, request, query: Object.fromEntries(url.searchParams), captured, user, signal: request.signal };
    const cache = cacheOf(ctx, route, url.searchParams);
    const answered = await answer(route, method === "HEAD" ? "GET" : method, call, cache, `${path}${url.search}`);
    if ("download" in answered) return downloadResponse(answered.download);
    const response = encodedResponse(answered.encoded, answered.headers, cache !== undefined, request, compress);
    if (method === "HEAD") response.body = null;
    return response;
  } catch (error) {
    // Nothing above is expected to throw; if it does, the request still gets an answer and the process stays up.
    console.error("churnscope: unexpected error answering an API request", error);
    return failureResponse(error);
  }
}

type Answered = { encoded: EncodedAnswer; headers: Record<string, string> } | { download: Download };

/** The handler's answer, encoded once; a panel's is shared with the same request made a moment ago. */
async function answer(route: ApiRoute, method: string, call: ApiCall, cache: AnswerCache | undefined, cacheKey: string): Promise<Answered> {
  const cached = cache?.get(cacheKey);
  if (cached) return { encoded: cached, headers: {} };
  const handler = route.methods[method as keyof ApiRoute["methods"]]!;
  let download: Download | undefined;
  const outcome = await envelopeOf(async () => {
    const result = await handler(call);
    if (!("download" in result)) return result;
    download = result.download;
    return { data: null };
  });
  if (download) return { download };
  const encoded = encodeAnswer(outcome.httpStatus, outcome.body);
  cache?.set(cacheKey, encoded);
  return { encoded, headers: outcome.headers };
}

function encodedResponse(encoded: EncodedAnswer, extra: Record<string, string>, shared: boolean, request: ApiRequest, compress: boolean): ApiResponse {
  const headers: Record<string, string> = {
    ...baseHeaders(development()),
    "Content-Type": "application/json",
    ...(shared ? cacheHeaders(encoded) : { "Cache-Control": "no-store" }),
    ...extra,
  };
  const compressible = encoded.plain.length >= COMPRESS_FROM_BYTES;
  if (compressible) headers.Vary = "Accept-Encoding";
  if (shared && notModified(request.headers.get("if-none-match"), encoded)) return { status: 304, headers, body: null };
  let body: Buffer = encoded.plain;
  if (compress && compressible && acceptsGzip(request.headers.get("accept-encoding"))) {
    body = shared ? gzippedOf(encoded) : gzipSync(encoded.plain, { level: 1 });
    headers["Content-Encoding"] = "gzip";
  }
  headers["Content-Length"] = String(body.length);
  return { status: encoded.httpStatus, headers, body };
}

function downloadResponse({ filename, bytes, contentType }: Download): ApiResponse {
  const headers = {
    ...baseHeaders(development()),
    "Content-Type": contentType ?? "application/gzip",
    "Content-Disposition": `attachment; filename="${filename}"`,
    "Cache-Control": "no-store",
    "Content-Length": String(bytes.length),
  };
  return { status: 200, headers, body: bytes };
}

/** Whether an Accept-Encoding header admits gzip: named, or `*`, and not with q=0. */
export function acceptsGzip(header: string | null | undefined): boolean {
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
