/**
 * A typed client for the Prometheus HTTP API (and Thanos/Mimir/VictoriaMetrics, which speak it).
 * It returns data with Prometheus's warnings and infos attached and throws PromError otherwise.
 * The URL and credentials come only from server configuration.
 */
import http from "node:http";
import https from "node:https";
import { createBrotliDecompress, createGunzip, createInflate } from "node:zlib";
import { PromError } from "../promql/errors";
import { maxSourceResolutionSeconds, type SourceResolution } from "../promql/flavor";
import { labelSetList, metadataMap, queryData, stringList as stringData } from "../promql/shape";
import type { PromClient, PromResult, TimeBounds } from "../promql/types";

export interface PromClientOptions {
  /** Base URL, possibly with a path prefix: http://thanos:9090 or https://host/prometheus */
  url: string;
  /** Sent with every request (already includes Authorization when configured). */
  headers: Record<string, string>;
  timeoutMs: number;
  /** The largest answer read (decoded bytes); past it the call fails as too_large. */
  maxAnswerBytes?: number;
  /** When false, send partial_response=false so Thanos fails instead of answering partially. */
  partialResponse?: boolean;
  /** The coarsest Thanos blocks a query may read (max_source_resolution); raw when not given. */
  maxSourceResolution?: SourceResolution;
  /** Ask for gzipped answers: less to carry over a slow link, more work for both ends. */
  gzip?: boolean;
}

export function createPromClient(options: PromClientOptions): PromClient {
  const base = options.url.replace(/\/+$/, "");
  const maxAnswerBytes = options.maxAnswerBytes ?? DEFAULT_MAX_ANSWER_BYTES;
  // Answers being read or parsed, all calls together: each may take several times its size while it is parsed,
  // so two of the largest at once is the most memory answers may take (an export asks for a dozen panels at once).
  const held: AnswerBudget = { bytes: 0, maxBytes: IN_FLIGHT_ANSWERS * maxAnswerBytes };

  function commonParams(): [string, string][] {
    return options.partialResponse === false ? [["partial_response", "false"]] : [];
  }

  // Thanos Query's own parameters on every query (Prometheus and VictoriaMetrics ignore them, so they are sent
  // before the engine is known): replicas merged, and the coarsest blocks it may read.
  function thanosParams(stepSeconds?: number): [string, string][] {
    return [
      ["dedup", "true"],
      ["max_source_resolution", `${maxSourceResolutionSeconds(options.maxSourceResolution ?? "raw", stepSeconds)}s`],
    ];
  }

  function boundsParams(bounds?: TimeBounds): [string, string][] {
    const out: [string, string][] = [];
    if (bounds?.startSeconds !== undefined) out.push(["start", String(bounds.startSeconds)]);
    if (bounds?.endSeconds !== undefined) out.push(["end", String(bounds.endSeconds)]);
    return out;
  }

  async function call<T>(
    method: "GET" | "POST",
    path: string,
    params: [string, string][],
    shape: (data: unknown) => T,
    signal?: AbortSignal,
  ): Promise<PromResult<T>> {
    const timeout = AbortSignal.timeout(options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const body = new URLSearchParams(params).toString();
    const url = new URL(method === "GET" ? `${base}${path}?${body}` : `${base}${path}`);
    const headers: Record<string, string> = { Accept: "application/json", ...(options.gzip ? { "Accept-Encoding": "gzip" } : {}), ...options.headers };
    if (method === "POST") headers["Content-Type"] = "application/x-www-form-urlencoded";

    let response: { status: number; text: string; bytes: number };
    try {
      const send = () => exchange(url, method, headers, method === "POST" ? body : undefined, combined, maxAnswerBytes, held);
      // A kept-alive connection Prometheus closed as it was reused: the request never reached it, so it goes once more
      // on a fresh connection (queries are read-only).
      response = await send().catch((error: unknown) => (error instanceof StaleConnection ? send() : Promise.reject(error)));
    } catch (error) {
      if (PromError.is(error)) throw error;
      // A deadline the caller set (from when its request arrived) is a timeout too, not an abandoned request.
      if (signal?.aborted && !isTimeout(signal.reason)) throw signal.reason ?? error;
      if (timeout.aborted || signal?.aborted) {
        throw new PromError("timeout", `Prometheus did not answer within ${options.timeoutMs / 1000} s`);
      }
      throw new PromError("unreachable", `Prometheus is unreachable: ${describeNetworkError(error)}`);
    }
    if (response.status >= 300 && response.status < 400) {
      // Not followed: a redirected POST loses its query. Where it leads is not said, as it names an address.
      throw new PromError(
        "bad_response",
        `Prometheus (or a proxy in front of it) answered with a redirect (HTTP ${response.status}): set prometheus.url to the address it redirects to`,
        response.status,
      );
    }
    try {
      const result = parseEnvelope<unknown>(response.status, response.text);
      return { ...result, data: shape(result.data) };
    } finally {
      held.bytes -= response.bytes;
    }
  }

  return {
    query: (expr, timeSeconds, signal) =>
      call(
        "POST",
        "/api/v1/query",
        [["query", expr], ["time", String(timeSeconds)], ...timeoutParam(options), ...commonParams(), ...thanosParams()],
        queryData,
        signal,
      ),
    queryRange: (expr, range, signal) =>
      call(
        "POST",
        "/api/v1/query_range",
        [
          ["query", expr],
          ["start", String(range.startSeconds)],
          ["end", String(range.endSeconds)],
          ["step", String(range.stepSeconds)],
          ...timeoutParam(options),
          ...commonParams(),
          ...thanosParams(range.stepSeconds),
        ],
        queryData,
        signal,
      ),
    series: (match, bounds, signal) =>
      call(
        "POST",
        "/api/v1/series",
        [...match.map((m): [string, string] => ["match[]", m]), ...boundsParams(bounds), ...limitParam(bounds?.limit), ...commonParams()],
        labelSetList,
        signal,
      ),
    labels: (match, bounds, signal) =>
      call("POST", "/api/v1/labels", [...match.map((m): [string, string] => ["match[]", m]), ...boundsParams(bounds), ...commonParams()], stringData, signal),
    labelValues: (label, match, bounds, signal) =>
      call(
        "GET",
        `/api/v1/label/${encodeURIComponent(label)}/values`,
        [...match.map((m): [string, string] => ["match[]", m]), ...boundsParams(bounds), ...commonParams()],
        stringData,
        signal,
      ),
    metadata: (metric, signal) => call("GET", "/api/v1/metadata", metric ? [["metric", metric]] : [], metadataMap, signal),
    thanosStores: (signal) => call("GET", "/api/v1/stores", [], (data) => data, signal),
  };
}

const DEFAULT_MAX_ANSWER_BYTES = 64 * 1024 * 1024;
/** How many of the largest answers may be held at once, all calls together. */
const IN_FLIGHT_ANSWERS = 2;

/** The bytes of answers being read or parsed now, and the most they may be. */
interface AnswerBudget {
  bytes: number;
  maxBytes: number;
}

const isTimeout = (reason: unknown) => reason instanceof Error && reason.name === "TimeoutError";

const agents = { http: new http.Agent({ keepAlive: true }), https: new https.Agent({ keepAlive: true }) };

/** A reused kept-alive connection that the server had closed: nothing was answered, and a fresh one may be tried. */
class StaleConnection extends Error {
  constructor(original: Error) {
    super(original.message, { cause: original });
  }
}
const decoders: Record<string, () => NodeJS.ReadWriteStream> = { gzip: createGunzip, deflate: createInflate, br: createBrotliDecompress };

/**
 * One request with node:http, on kept-alive connections. fetch (undici) took twice the CPU for a
 * large answer, its web streams and default gzip costing a third more time on loopback (a
 * 1,000-point, 13-series answer: 9.3 ms of CPU and 45 ms against 4.3 ms and 32 ms).
 */
function exchange(
  url: URL,
  method: string,
  headers: Record<string, string>,
  body: string | undefined,
  signal: AbortSignal,
  maxBytes: number,
  held: AnswerBudget,
): Promise<{ status: number; text: string; bytes: number }> {
  return new Promise((resolve, reject) => {
    const secure = url.protocol === "https:";
    const sent = body === undefined ? headers : { ...headers, "Content-Length": String(Buffer.byteLength(body)) };
    let bytes = 0;
    let settled = false;
    /** Gives back what this answer held of the budget (unless it passed to the caller with the answer), and fails. */
    const fail = (error: unknown) => {
      if (settled) return;
      settled = true;
      held.bytes -= bytes;
      reject(error);
    };
    let answered = false;
    const request = (secure ? https : http).request(url, { method, headers: sent, agent: secure ? agents.https : agents.http, signal }, (response) => {
      answered = true;
      const decode = decoders[String(response.headers["content-encoding"] ?? "").toLowerCase()];
      const stream = decode ? response.pipe(decode()) : response;
      const chunks: Buffer[] = [];
      // Counted as it arrives (decoded, so a small gzip cannot unpack past it): an answer past the bound is dropped, never held.
      const tooLarge = (message: string) => {
        request.destroy();
        fail(new PromError("too_large", message));
      };
      const declared = Number(response.headers["content-length"] ?? 0);
      const tooLargeAlone = () =>
        tooLarge(`Prometheus answered with more than ${Math.round(maxBytes / 1048576)} MiB (prometheus.maxAnswerMiB): narrow the range or the selection`);
      if (!decode && declared > maxBytes) return tooLargeAlone();
      stream.on("data", (chunk: Buffer) => {
        if (settled) return;
        bytes += chunk.length;
        held.bytes += chunk.length;
        if (bytes > maxBytes) return tooLargeAlone();
        if (held.bytes > held.maxBytes)
          return tooLarge(
            `Prometheus's answers being read hold more than ${Math.round(held.maxBytes / 1048576)} MiB together (twice prometheus.maxAnswerMiB): narrow the range, or open fewer panels at once`,
          );
        chunks.push(chunk);
      });
      stream.on("end", () => {
        if (settled) return;
        try {
          const text = Buffer.concat(chunks).toString("utf8");
          settled = true;
          resolve({ status: response.statusCode ?? 0, text, bytes });
        } catch (error) {
          fail(error);
        }
      });
      stream.on("error", fail);
      // A connection cut mid-answer (or an abort then) ends the response without "end".
      response.on("close", () => {
        if (!response.complete) fail(new Error("the connection closed before the answer was complete"));
      });
    });
    request.on("error", (error: NodeJS.ErrnoException) =>
      fail(request.reusedSocket && !answered && (error.code === "ECONNRESET" || error.code === "EPIPE") ? new StaleConnection(error) : error),
    );
    request.end(body);
  });
}

function timeoutParam(options: PromClientOptions): [string, string][] {
  // Ask Prometheus to give up a little before we do, so the reply says "timeout" rather than nothing.
  const seconds = Math.max(1, Math.floor((options.timeoutMs * 0.9) / 1000));
  return [["timeout", `${seconds}s`]];
}

function limitParam(limit?: number): [string, string][] {
  return limit === undefined ? [] : [["limit", String(limit)]];
}

/** Turns an HTTP reply into data or a PromError. Exported for tests of proxy replies. */
export function parseEnvelope<T>(httpStatus: number, text: string): PromResult<T> {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new PromError(
      "bad_response",
      `Prometheus (or a proxy in front of it) answered HTTP ${httpStatus} with a body that is not JSON: ${snippet(text)}`,
      httpStatus,
    );
  }
  if (!isObject(body) || (body.status !== "success" && body.status !== "error")) {
    throw new PromError("bad_response", `HTTP ${httpStatus}: the reply is not a Prometheus API response: ${snippet(text)}`, httpStatus);
  }
  if (body.status === "error") {
    const errorType = typeof body.errorType === "string" ? body.errorType : "unknown";
    const message = typeof body.error === "string" ? body.error : "no error message";
    const failure = errorType === "timeout" ? "timeout" : "upstream";
    throw new PromError(failure, `Prometheus ${errorType} error (HTTP ${httpStatus}): ${message}`, httpStatus, errorType);
  }
  // Thanos answers Prometheus's infos among its warnings; Prometheus marks each by its prefix.
  const warnings = stringList(body.warnings);
  const isInfo = (w: string) => w.startsWith("PromQL info:");
  return {
    data: body.data as T,
    warnings: warnings.filter((w) => !isInfo(w)),
    infos: [...stringList(body.infos), ...warnings.filter(isInfo)],
    ...(isObject(body.stats) && "seriesFetched" in body.stats ? { servedBy: "victoriametrics" as const } : {}),
  };
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function stringList(value: unknown): string[] {
  return Array.isArray(value) ? value.map(String) : [];
}

function snippet(text: string): string {
  const flat = text.replace(/\s+/g, " ").trim();
  if (flat === "") return "(empty body)";
  return JSON.stringify(flat.length > 200 ? `${flat.slice(0, 200)}…` : flat);
}

/** The error code only: the underlying message names Prometheus's address, which browsers must not see. */
function describeNetworkError(error: unknown): string {
  const failure = error as { code?: string; cause?: { code?: string } } | undefined;
  return failure?.code ?? failure?.cause?.code ?? "network error";
}
