/**
 * The client against a loopback HTTP server that answers the way Prometheus, Thanos and proxies in
 * front of them do. (Real Prometheus answers are covered by the integration tests.)
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createPromClient, parseEnvelope } from "@/lib/prometheus/client";
import { PromError } from "@/lib/promql/errors";
import { detectFlavor, detectWindows, engineInfos, WINDOW_PROBE, type EngineTraits, type SourceResolution } from "@/lib/promql/flavor";
import { freePort } from "../../helpers/processes";

type Handler = (req: IncomingMessage, body: string, res: ServerResponse) => void;
let handler: Handler = () => {};
let server: Server;
let base = "";
const seen: { method?: string; url?: string; body: string; headers: IncomingMessage["headers"] }[] = [];

beforeAll(async () => {
  server = createServer((req, res) => {
    let body = "";
    req.on("data", (d) => (body += d));
    req.on("end", () => {
      seen.push({ method: req.method, url: req.url, body, headers: req.headers });
      handler(req, body, res);
    });
  });
  await new Promise<void>((r) => server.listen(0, "127.0.0.1", r));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}/prefix`;
});
// Every connection ended too: a test's handler may never answer, and close() would wait for that request.
afterAll(() => new Promise<void>((r) => server.close(() => r()).closeAllConnections()));

const client = (timeoutMs = 2000) =>
  createPromClient({ url: base, headers: { Authorization: "Bearer s3cret", "X-Scope-OrgID": "t1" }, timeoutMs, partialResponse: false });

async function failure(promise: Promise<unknown>): Promise<PromError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(PromError);
    return error as PromError;
  }
  throw new Error("expected a failure");
}

describe("Prometheus client", () => {
  it("POSTs range queries with credentials, partial_response=false and a server-side timeout; keeps warnings and infos", async () => {
    handler = (_req, _body, res) =>
      res.end(
        JSON.stringify({
          status: "success",
          data: { resultType: "matrix", result: [] },
          warnings: ["results truncated due to limit"],
          infos: ["PromQL info: x"],
        }),
      );
    const result = await client().queryRange("up", { startSeconds: 60, endSeconds: 120, stepSeconds: 15 });
    expect(result.warnings).toEqual(["results truncated due to limit"]);
    expect(result.infos).toEqual(["PromQL info: x"]);
    const request = seen[seen.length - 1];
    expect(request.method).toBe("POST");
    expect(request.url).toBe("/prefix/api/v1/query_range");
    expect(request.headers.authorization).toBe("Bearer s3cret");
    expect(request.headers["x-scope-orgid"]).toBe("t1");
    const form = new URLSearchParams(request.body);
    expect(Object.fromEntries(form)).toMatchObject({ query: "up", start: "60", end: "120", step: "15", partial_response: "false", timeout: "1s" });
  });

  it("asks Thanos to merge replicas and read raw blocks unless told otherwise; auto reads a fifth of the step", async () => {
    handler = (_req, _body, res) => res.end(JSON.stringify({ status: "success", data: { resultType: "matrix", result: [] } }));
    const sent = () => Object.fromEntries(new URLSearchParams(seen[seen.length - 1].body));
    await client().queryRange("up", { startSeconds: 0, endSeconds: 86_400, stepSeconds: 3600 });
    expect(sent()).toMatchObject({ dedup: "true", max_source_resolution: "0s" });
    const auto = createPromClient({ url: base, headers: {}, timeoutMs: 2000, maxSourceResolution: "auto" });
    await auto.queryRange("up", { startSeconds: 0, endSeconds: 86_400, stepSeconds: 3600 });
    expect(sent()).toMatchObject({ dedup: "true", max_source_resolution: "720s" });
    await auto.query("up", 60);
    expect(sent()).toMatchObject({ dedup: "true", max_source_resolution: "0s" });
    await createPromClient({ url: base, headers: {}, timeoutMs: 2000, maxSourceResolution: "1h" }).query("up", 60);
    expect(sent()).toMatchObject({ max_source_resolution: "3600s" });
  });

  it("sends repeated match[] for series and label values", async () => {
    handler = (_req, _body, res) => res.end(JSON.stringify({ status: "success", data: ["a"] }));
    await client().labelValues("job", ["apiserver_request_total", 'up{job="x"}'], { startSeconds: 1, endSeconds: 2 });
    const request = seen[seen.length - 1];
    expect(request.method).toBe("GET");
    const url = new URL(request.url!, "http://x");
    expect(url.pathname).toBe("/prefix/api/v1/label/job/values");
    expect(url.searchParams.getAll("match[]")).toEqual(["apiserver_request_total", 'up{job="x"}']);
  });

  it("asks for metric metadata by name", async () => {
    handler = (_req, _body, res) =>
      res.end(JSON.stringify({ status: "success", data: { apiserver_request_total: [{ type: "counter", help: "h", unit: "" }] } }));
    const result = await client().metadata("apiserver_request_total");
    expect(result.data.apiserver_request_total[0].type).toBe("counter");
    expect(seen[seen.length - 1].url).toBe("/prefix/api/v1/metadata?metric=apiserver_request_total");
  });

  it("reports Prometheus error envelopes with their type", async () => {
    handler = (_req, _body, res) => {
      res.statusCode = 422;
      res.end(JSON.stringify({ status: "error", errorType: "execution", error: "query processing would load too many samples into memory" }));
    };
    const error = await failure(client().query("up", 1));
    expect(error.failure).toBe("upstream");
    expect(error.errorType).toBe("execution");
    expect(error.message).toMatch(/too many samples/);
  });

  it("reports a proxy's non-JSON 503 with a snippet of the body", async () => {
    handler = (_req, _body, res) => {
      res.statusCode = 503;
      res.setHeader("Content-Type", "text/html");
      res.end("<html><body>upstream connect error or disconnect/reset before headers</body></html>");
    };
    const error = await failure(client().query("up", 1));
    expect(error.failure).toBe("bad_response");
    expect(error.httpStatus).toBe(503);
    expect(error.message).toMatch(/not JSON.*upstream connect error/);
  });

  it("asks for gzip only when configured, and reads compressed answers either way", async () => {
    const answer = { status: "success", data: { resultType: "vector", result: [{ metric: { resource: "connectors" }, value: [1, "0.5"] }] } };
    handler = (req, _body, res) => {
      const zipped = /gzip/.test(String(req.headers["accept-encoding"] ?? ""));
      if (zipped) res.setHeader("Content-Encoding", "gzip");
      res.end(zipped ? gzipSync(JSON.stringify(answer)) : JSON.stringify(answer));
    };
    const plain = await client().query("up", 1);
    expect(seen[seen.length - 1].headers["accept-encoding"]).toBeUndefined();
    const zipped = await createPromClient({ url: base, headers: {}, timeoutMs: 2000, gzip: true }).query("up", 1);
    expect(seen[seen.length - 1].headers["accept-encoding"]).toBe("gzip");
    expect(zipped.data).toEqual(answer.data);
    expect(plain.data).toEqual(answer.data);
  });

  it("reports an answer cut off midway as unreachable, not as a body that is not JSON", async () => {
    handler = (_req, _body, res) => {
      res.setHeader("Content-Length", "1000");
      res.write('{"status":"success","data":{"resultType":"matrix","result":[');
      setTimeout(() => res.socket?.destroy(), 20);
    };
    const error = await failure(client().queryRange("up", { startSeconds: 60, endSeconds: 120, stepSeconds: 15 }));
    expect(error.failure).toBe("unreachable");
  });

  it("reports a redirect instead of following it, without naming where it leads", async () => {
    handler = (_req, _body, res) => {
      res.statusCode = 301;
      res.setHeader("Location", "https://internal-prometheus.example:9090/");
      res.end("<html>Moved</html>");
    };
    const error = await failure(client().query("up", 1));
    expect(error.failure).toBe("bad_response");
    expect(error.httpStatus).toBe(301);
    expect(error.message).toMatch(/redirect \(HTTP 301\): set prometheus\.url/);
    expect(error.message).not.toContain("internal-prometheus");
  });

  it("drops an answer past maxAnswerBytes as it arrives, plain or gzipped, and says so", async () => {
    const MiB = 1024 * 1024;
    const small = createPromClient({ url: base, headers: {}, timeoutMs: 5000, maxAnswerBytes: MiB });
    // A valid matrix that keeps coming: 8 MiB streamed in 64 KiB chunks, with no length announced.
    handler = (_req, _body, res) => {
      res.write('{"status":"success","data":{"resultType":"matrix","result":[');
      const chunk = `${'{"metric":{"a":"b"},"values":[[1,"1"]]},'.repeat(1600)}`;
      let sent = 0;
      const more = () => {
        if (res.destroyed) return;
        if (sent > 8 * MiB) return res.end('{"metric":{},"values":[]}]}}');
        sent += chunk.length;
        res.write(chunk, () => setImmediate(more));
      };
      more();
    };
    const streamed = await failure(small.queryRange("up", { startSeconds: 60, endSeconds: 120, stepSeconds: 15 }));
    expect(streamed.failure).toBe("too_large");
    expect(streamed.message).toMatch(/more than 1 MiB \(prometheus\.maxAnswerMiB\)/);
    // 20 MiB of zeros gzip to about 20 KB: the bound counts what it unpacks to.
    handler = (_req, _body, res) => {
      res.setHeader("Content-Encoding", "gzip");
      res.end(gzipSync(`{"status":"success","data":{"resultType":"vector","result":[],"pad":"${"0".repeat(20 * MiB)}"}}`));
    };
    expect((await failure(small.query("up", 1))).failure).toBe("too_large");
    // Announced too large: refused before reading.
    handler = (_req, _body, res) => {
      res.setHeader("Content-Length", String(2 * MiB));
      res.write("{");
    };
    expect((await failure(small.query("up", 1))).failure).toBe("too_large");
    // The same client answers the next call normally.
    handler = (_req, _body, res) => res.end(JSON.stringify({ status: "success", data: { resultType: "vector", result: [] } }));
    await expect(small.query("up", 1)).resolves.toMatchObject({ data: { resultType: "vector", result: [] } });
  });

  it("holds at most two of the largest answers at once, all calls together, and gives their bytes back", async () => {
    const MiB = 1024 * 1024;
    const small = createPromClient({ url: base, headers: {}, timeoutMs: 5000, maxAnswerBytes: MiB });
    // Each answer is 0.9 MiB, 0.7 of it sent at once and the rest after a pause: three at once hold 2.1 MiB while being read.
    handler = (_req, _body, res) => {
      res.write(`{"status":"success","data":{"resultType":"vector","result":[],"pad":"${"x".repeat(Math.floor(0.7 * MiB))}`);
      setTimeout(() => res.end(`${"x".repeat(Math.floor(0.2 * MiB))}"}}`), 300);
    };
    const outcomes = await Promise.allSettled([0, 1, 2].map(() => small.query("up", 1)));
    const failures = outcomes.filter((o) => o.status === "rejected").map((o) => (o as PromiseRejectedResult).reason as PromError);
    expect(failures.length).toBeGreaterThanOrEqual(1);
    for (const f of failures) expect([f.failure, f.message]).toEqual(["too_large", expect.stringContaining("hold more than 2 MiB together")]);
    // Whatever failed gave its bytes back: one at a time, each answer fits.
    for (let i = 0; i < 3; i++) await expect(small.query("up", 1)).resolves.toMatchObject({ data: { resultType: "vector" } });
  });

  it("reports success answers whose data has the wrong shape as the upstream's fault", async () => {
    for (const data of [
      null,
      {},
      { resultType: "matrix", result: null },
      { resultType: "matrix", result: [{ metric: {}, values: "x" }] },
      { resultType: "vector", result: [{ metric: { a: 1 } }] },
      { resultType: "nonsense", result: [] },
    ]) {
      handler = (_req, _body, res) => res.end(JSON.stringify({ status: "success", data }));
      const error = await failure(client().queryRange("up", { startSeconds: 60, endSeconds: 120, stepSeconds: 15 }));
      expect([JSON.stringify(data), error.failure]).toEqual([JSON.stringify(data), "bad_response"]);
    }
    handler = (_req, _body, res) => res.end(JSON.stringify({ status: "success", data: [1, 2] }));
    expect((await failure(client().series(["up"]))).failure).toBe("bad_response");
    expect((await failure(client().labelValues("job", []))).failure).toBe("bad_response");
  });

  it("times out a Prometheus that does not answer", async () => {
    handler = () => {}; // never answers
    const error = await failure(client(300).query("up", 1));
    expect(error.failure).toBe("timeout");
  });

  it("sends a query again on a fresh connection when a kept-alive one was closed as it was reused, once", async () => {
    const served = new WeakMap<object, number>();
    let dropped = 0;
    let answered = 0;
    let dropAll = false;
    // As Prometheus closing an idle connection just as the next request arrives on it.
    handler = (req, _body, res) => {
      const count = (served.get(req.socket) ?? 0) + 1;
      served.set(req.socket, count);
      if (count > 1 || dropAll) {
        dropped++;
        req.socket.destroy();
        return;
      }
      answered++;
      res.setHeader("Content-Type", "application/json");
      res.end('{"status":"success","data":{"resultType":"vector","result":[]}}');
    };
    const c = client();
    for (let i = 0; i < 3; i++) expect((await c.query("up", 1)).data).toEqual({ resultType: "vector", result: [] });
    expect(answered).toBe(3);
    expect(dropped).toBeGreaterThanOrEqual(2);
    // A connection that fails fresh is not tried again: the failure is the answer.
    dropAll = true;
    dropped = 0;
    expect((await failure(c.query("up", 1))).failure).toBe("unreachable");
    expect(dropped).toBeLessThanOrEqual(2);
  });

  it("reports an unreachable Prometheus", async () => {
    const port = await freePort(); // free a moment ago, so nothing listens there
    const closed = createPromClient({ url: `http://127.0.0.1:${port}`, headers: {}, timeoutMs: 2000 });
    const error = await failure(closed.query("up", 1));
    expect(error.failure).toBe("unreachable");
    expect(error.message).toMatch(/ECONNREFUSED/);
  });
});

describe("the engine behind an answer", () => {
  it("keeps Prometheus's infos apart from its warnings where Thanos answers both as warnings", () => {
    const thanos = JSON.stringify({
      status: "success",
      data: { resultType: "vector", result: [] },
      warnings: ['PromQL info: metric might not be a counter, name does not end in _total/_sum/_count/_bucket: "x"', "store 10.0.0.1 unavailable"],
    });
    const parsed = parseEnvelope(200, thanos);
    expect(parsed.warnings).toEqual(["store 10.0.0.1 unavailable"]);
    expect(parsed.infos).toEqual(['PromQL info: metric might not be a counter, name does not end in _total/_sum/_count/_bucket: "x"']);
  });

  const answering = (stores: (res: ServerResponse) => void) => {
    handler = (req, _body, res) => {
      if (req.url?.includes("/api/v1/stores")) return stores(res);
      res.end(JSON.stringify({ status: "success", data: { resultType: "vector", result: [] } }));
    };
  };

  it("is Thanos where /api/v1/stores answers, Prometheus where it is refused, and unknown where nothing answers", async () => {
    answering((res) => res.end(JSON.stringify({ status: "success", data: { sidecar: [{ name: "127.0.0.1:1" }] } })));
    expect(await detectFlavor(client())).toBe("thanos");
    answering((res) => {
      res.statusCode = 404;
      res.end("404 page not found");
    });
    expect(await detectFlavor(client())).toBe("prometheus");
    answering((res) => {
      res.statusCode = 503;
      res.end("upstream down");
    });
    expect(await detectFlavor(client())).toBeNull();
  });

  it("a Thanos panel says the replicas are merged and whether downsampled blocks may answer", () => {
    const thanos = (sourceResolution: SourceResolution): EngineTraits => ({ flavor: "thanos", windows: "closed", sourceResolution });
    expect(engineInfos({ flavor: "prometheus", windows: "closed", sourceResolution: "auto" }, 86_400, true)).toEqual([]);
    expect(engineInfos(thanos("raw"), 86_400, true)).toEqual(["Thanos: replicas deduplicated; raw samples only."]);
    // auto reads a fifth of the step: 5m blocks from a 25-minute step, 1h blocks from a 5-hour one
    expect(engineInfos(thanos("auto"), 1499, true)).toEqual(["Thanos: replicas deduplicated; raw samples only."]);
    expect(engineInfos(thanos("auto"), 1500, true)).toEqual([expect.stringMatching(/downsampled to 5m \(max_source_resolution=300s\).*estimates/)]);
    expect(engineInfos(thanos("auto"), 18_000, false)).toEqual([expect.stringMatching(/downsampled to 1h \(max_source_resolution=3600s\)/)]);
    expect(engineInfos(thanos("5m"), 60, true)).toEqual([expect.stringMatching(/downsampled to 5m/)]);
  });

  it("a rate over left-open windows says so, on charts of rates only", () => {
    const leftOpen = (flavor: EngineTraits["flavor"]): EngineTraits => ({ flavor, windows: "left-open", sourceResolution: "raw" });
    expect(engineInfos(leftOpen("prometheus"), 60, true)).toEqual([
      expect.stringMatching(/^This engine reads a window as \(t−w, t\].*the counter's rise over the window/),
    ]);
    expect(engineInfos(leftOpen("prometheus"), 60, false)).toEqual([]);
    expect(engineInfos(leftOpen("thanos"), 60, true)).toHaveLength(2);
  });

  it("tells closed windows from left-open ones by the points the engine counts in a window, and asks again where it cannot tell", async () => {
    const counting = (value: string | null) => {
      handler = (_req, body, res) => {
        expect(new URLSearchParams(body).get("query")).toBe(WINDOW_PROBE);
        const result = value === null ? [] : [{ metric: {}, value: [60, value] }];
        res.end(JSON.stringify({ status: "success", data: { resultType: "vector", result } }));
      };
    };
    counting("5");
    expect(await detectWindows(client(), "prometheus")).toBe("closed");
    counting("4");
    expect(await detectWindows(client(), "prometheus")).toBe("left-open");
    counting(null);
    expect(await detectWindows(client(), "prometheus")).toBeNull();
    // VictoriaMetrics is not asked: its rates start from the sample before a window whatever its subqueries count.
    counting("4");
    expect(await detectWindows(client(), "victoriametrics")).toBe("closed");
  });

  it("is VictoriaMetrics where the answer carries its statistics, as every VictoriaMetrics query answer does", () => {
    const vm = '{"status":"success","data":{"resultType":"vector","result":[]},"stats":{"seriesFetched":"0","executionTimeMsec":0}}';
    expect(parseEnvelope(200, vm).servedBy).toBe("victoriametrics");
    // Prometheus's own statistics (asked with stats=all) are another shape.
    const prom = '{"status":"success","data":{"resultType":"vector","result":[]},"stats":{"timings":{},"samples":{}}}';
    expect(parseEnvelope(200, prom).servedBy).toBeUndefined();
    expect(parseEnvelope(200, '{"status":"success","data":[]}').servedBy).toBeUndefined();
  });
});
