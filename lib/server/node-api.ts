/**
 * How serve.cjs hands node:http's requests to the API pipeline (api.ts) before Next sees them: every
 * /api/* request, and for every other path only what no route can take. Through Next's routing an
 * API request paid about 3 ms of routing, proxy and compression, more than Prometheus takes to
 * answer most panels. Pages are Next's.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { Readable } from "node:stream";
import type { HeaderReader } from "./access";
import { failureResponse, handleApi, refusal, type ApiResponse } from "./api";
import type { ApiRequest } from "./api-request";
import type { ServerContext } from "./context";
import { targetRefusal } from "./request-guard";

/** Takes the request and answers it (true), or leaves it to Next (false). */
export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => boolean;

/** serve.cjs reads the handler under this key: it is plain JavaScript and cannot import this module. */
const API_HANDLER_KEY = Symbol.for("churnscope.api");

export function registerApiHandler(handler: NodeHandler): void {
  (globalThis as Record<symbol, unknown>)[API_HANDLER_KEY] = handler;
}

export function nodeApi(context: () => ServerContext): NodeHandler {
  return (req, res) => {
    const url = req.url ?? "/";
    // `*` and absolute-form targets: Next's router threw on them (Invalid URL) and answered 500.
    const target = targetRefusal(url);
    if (target) {
      send(res, failureResponse(target));
      return true;
    }
    const queryAt = url.indexOf("?");
    const path = queryAt === -1 ? url : url.slice(0, queryAt);
    if (path.startsWith("/api/")) {
      // The pipeline refuses what no route takes itself.
      void answer(context, req, res, url);
      return true;
    }
    const refused = refusal((req.method ?? "GET").toUpperCase(), path);
    if (refused) send(res, refused);
    return refused !== null;
  };
}

async function answer(context: () => ServerContext, req: IncomingMessage, res: ServerResponse, url: string): Promise<void> {
  let response: ApiResponse;
  try {
    const gone = new AbortController();
    res.once("close", () => res.writableFinished || gone.abort());
    const method = (req.method ?? "GET").toUpperCase();
    const request: ApiRequest = {
      method,
      url,
      headers: headersOf(req),
      signal: gone.signal,
      body: method === "GET" || method === "HEAD" ? null : (Readable.toWeb(req) as ReadableStream<Uint8Array>),
    };
    response = await handleApi(context, request);
  } catch (error) {
    response = failureResponse(error);
  }
  send(res, response);
}

/** node:http's headers as the pipeline reads them, by name, so nothing is copied. */
function headersOf(req: IncomingMessage): HeaderReader {
  return {
    get: (name) => {
      const value = req.headers[name.toLowerCase()];
      return value === undefined ? null : Array.isArray(value) ? value.join(", ") : value;
    },
  };
}

function send(res: ServerResponse, response: ApiResponse): void {
  if (res.destroyed || res.headersSent) return;
  res.writeHead(response.status, response.headers);
  res.end(response.body ?? undefined);
}
