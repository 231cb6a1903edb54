/** `npm start` as an operator meets it: a bad configuration stops it with a message; no configuration opens the replay. */
import { existsSync, mkdtempSync } from "node:fs";
import { Agent, request } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { once } from "node:events";
import { createServer, type AddressInfo } from "node:net";
import { describe, expect, it, vi } from "vitest";
import { WriteStore } from "@/lib/store/store";
import { startApp, startCommand, writeConfig } from "../helpers/app";
import { freePort } from "../helpers/processes";

async function exitOf(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const running = startCommand(env);
  const timer = setTimeout(() => void running.stop(), 30_000);
  const [code] = (await once(running.child, "exit")) as [number | null];
  clearTimeout(timer);
  return { code, output: running.output() };
}

/** Two GETs through one kept-alive socket, `pauseMs` apart: each answer's status, Keep-Alive header, and whether it came on the first's socket. */
async function twoRequestsOneConnection(url: string, pauseMs: number) {
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  const get = () =>
    new Promise<{ status: number | undefined; keepAlive: string | undefined; reused: boolean }>((resolve, reject) => {
      const req = request(url, { agent }, (res) => {
        res.resume();
        res.on("end", () => resolve({ status: res.statusCode, keepAlive: String(res.headers["keep-alive"]), reused: req.reusedSocket }));
      });
      req.on("error", reject).end();
    });
  try {
    const first = await get();
    await new Promise((r) => setTimeout(r, pauseMs));
    return [first, await get()];
  } finally {
    agent.destroy();
  }
}

describe("startup", () => {
  it("stops with a message naming the key and the reason for a bad configuration file", async () => {
    const config = writeConfig("prometheus:\n  url: not a url\n  timeoutSeconds: 0\n");
    const { code, output } = await exitOf({ CHURNSCOPE_CONFIG: config });
    expect(code).toBe(1);
    expect(output).toMatch(/prometheus\.url: expected an http:\/\/ or https:\/\/ URL/);
    expect(output).toMatch(/prometheus\.timeoutSeconds: /);
    expect(output).not.toMatch(/Ready in/);
  });

  it("stops with a message naming the environment variable for a bad shortcut", async () => {
    const { code, output } = await exitOf({ PORT: "http" });
    expect(code).toBe(1);
    expect(output).toMatch(/PORT \(server\.port\)/);
  });

  it("stops with a message when its port is taken", async () => {
    const taken = createServer();
    await new Promise<void>((resolve) => taken.listen(0, "127.0.0.1", resolve));
    try {
      const port = (taken.address() as AddressInfo).port;
      const { code, output } = await exitOf({ PORT: String(port), CHURNSCOPE_CONFIG: writeConfig("server:\n  host: 127.0.0.1\n") });
      expect(code).toBe(1);
      expect(output).toContain(`churnscope: the server cannot listen on 127.0.0.1:${port}: listen EADDRINUSE`);
    } finally {
      taken.close();
    }
  });

  it("names the setting when its PostgreSQL database cannot be reached, stays not ready, answers 503 and never shows the password", async () => {
    const nowhere = await freePort();
    const url = `postgres://churnscope:hunter2-secret@127.0.0.1:${nowhere}/churnscope`;
    const app = await startApp({ CHURNSCOPE_DATABASE_URL: url, CHURNSCOPE_CONFIG: writeConfig("") });
    try {
      const ready = await fetch(`${app.url}/readyz`);
      expect(ready.status).toBe(503);
      expect((await ready.json()).checks).toMatchObject({ store: "failed" });
      const objects = await fetch(`${app.url}/api/objects?from=now-1h&to=now`);
      expect(objects.status).toBe(503);
      expect(await objects.json()).toMatchObject({ errorType: "store_unavailable", error: expect.stringContaining("PostgreSQL at 127.0.0.1") });
      const output = app.running.output();
      expect(output).toMatch(
        new RegExp(`PostgreSQL at 127\\.0\\.0\\.1:${nowhere} refused the connection: is it running, and is CHURNSCOPE_DATABASE_URL right\\?`),
      );
      expect(output).not.toContain("hunter2-secret");
    } finally {
      await app.stop();
    }
  });

  it("keeps a store a newer Churnscope migrated as it was: not ready, with the reason in the log, and panels still answer", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "churnscope-newer-"));
    await (await WriteStore.open(join(dataDir, "churnscope.sqlite"))).close();
    const db = new Database(join(dataDir, "churnscope.sqlite"));
    db.prepare("INSERT INTO schema_migrations (version, description, applied_ms) VALUES (42, 'a newer one', 0)").run();
    db.close();
    const app = await startApp({ CHURNSCOPE_DATA_DIR: dataDir });
    try {
      const ready = await fetch(`${app.url}/readyz`);
      expect(ready.status).toBe(503);
      expect((await ready.json()).checks).toMatchObject({ config: "ok", dataDir: "writable", store: "failed" });
      expect(app.running.output()).toMatch(/could not open the live store: the object store has schema version 42, written by a newer Churnscope/);
      const objects = await fetch(`${app.url}/api/objects?from=now-1h&to=now`);
      expect(objects.status).toBe(503);
      expect((await objects.json()).error).toMatch(/schema version 42/);
      expect((await fetch(`${app.url}/api/snapshots/replay`)).status).toBe(200);
    } finally {
      await app.stop();
    }
    const after = new Database(join(dataDir, "churnscope.sqlite"), { readonly: true });
    expect(after.prepare("SELECT MAX(version) AS v FROM schema_migrations").get()).toEqual({ v: 42 });
    after.close();
  });

  it("keeps an idle connection open past every client's own idle timeout by default, so a request sent on it after a pause is answered on it", async () => {
    // Node's default (5 s) closed connections that a busy client, or a proxy keeping its own for 60 s, sent its next request on.
    const app = await startApp({});
    try {
      const [first, second] = await twoRequestsOneConnection(`${app.url}/healthz`, 6_000);
      expect(first).toEqual({ status: 200, keepAlive: "timeout=65", reused: false });
      expect(second).toEqual({ status: 200, keepAlive: "timeout=65", reused: true });
    } finally {
      await app.stop();
    }
  }, 30_000);

  it("closes idle connections after KEEP_ALIVE_TIMEOUT where it is set, as Next's standalone server did", async () => {
    const app = await startApp({ KEEP_ALIVE_TIMEOUT: "1000" });
    try {
      const [first, second] = await twoRequestsOneConnection(`${app.url}/healthz`, 2_500);
      expect(first.keepAlive).toBe("timeout=1");
      // The server closed the idle connection: the second request needed a new one.
      expect(second).toEqual({ status: 200, keepAlive: "timeout=1", reused: false });
    } finally {
      await app.stop();
    }
  }, 30_000);

  it("stops on SIGTERM within SHUTDOWN_GRACE_MS although a request never finishes", async () => {
    const app = await startApp({ SHUTDOWN_GRACE_MS: "2000" });
    const url = new URL(app.url);
    // An upload whose body never ends: the graceful close would wait for it forever.
    const stalled = request({
      host: url.hostname,
      port: url.port,
      method: "POST",
      path: "/api/snapshots",
      headers: { "content-length": "1000000", "content-type": "application/octet-stream" },
    });
    stalled.on("error", () => undefined);
    stalled.write("x".repeat(1000));
    await new Promise((r) => setTimeout(r, 300));
    const startedMs = Date.now();
    const exited = new Promise<number | null>((resolve) => app.running.child.once("exit", (code) => resolve(code)));
    process.kill(-app.running.child.pid!, "SIGTERM");
    const code = await exited;
    expect(Date.now() - startedMs).toBeLessThan(6_000);
    expect(code === 143 || code === null).toBe(true);
    stalled.destroy();
    await app.stop();
  }, 30_000);

  it("with nothing configured opens the replay as it starts, before any visit; with anything to read, not", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "churnscope-ahead-"));
    const [bare, configured] = await Promise.all([
      startApp({ CHURNSCOPE_DATA_DIR: dataDir }),
      startApp({ CHURNSCOPE_CONFIG: writeConfig("prometheus:\n  url: http://127.0.0.1:9\n") }),
    ]);
    try {
      // Begun as the server starts, before it listens; no page was asked for (only /healthz, by startApp).
      expect(bare.running.output()).toContain("opening the replay, which the pages show, ahead of the first visit");
      await vi.waitFor(() => expect(bare.running.output()).toMatch(/the replay and its object store opened ahead in \d+ ms/), {
        timeout: 60_000,
        interval: 100,
      });
      // Its object store is in the data directory before any page asked for it.
      expect(existsSync(join(dataDir, "snapshots", "replay.sqlite"))).toBe(true);
      // With Prometheus configured its pages show Prometheus's data: nothing is opened ahead.
      expect(configured.running.output()).toContain("ready on");
      expect(configured.running.output()).not.toContain("opening the replay");
    } finally {
      await Promise.all([bare.stop(), configured.stop()]);
    }
  }, 120_000);

  it("with nothing configured opens the replay at an explicit link, and the live API says Prometheus is not configured", async () => {
    const app = await startApp({});
    try {
      const bare = await fetch(`${app.url}/`, { redirect: "manual" });
      expect(bare.status).toBe(307);
      const target = new URL(bare.headers.get("location")!, app.url);
      expect(Object.fromEntries(target.searchParams)).toEqual({
        snapshot: "replay",
        from: String(Date.parse("2026-09-09T00:00:00Z")),
        to: String(Date.parse("2026-09-13T06:00:00Z")),
        resource: "connectors.networking.datumapis.com",
      });
      const html = await (await fetch(target)).text();
      expect(html).toContain("Replay: ");
      expect(html).toContain("PROMETHEUS_URL=");
      const api = await fetch(`${app.url}/api/panels/writes-by-resource`);
      expect(api.status).toBe(503);
      expect(await api.json()).toMatchObject({ status: "error", errorType: "not_configured" });
      const replay = await fetch(
        `${app.url}/api/panels/writes-by-resource?snapshot=replay&from=${target.searchParams.get("from")}&to=${target.searchParams.get("to")}`,
      );
      expect(replay.status).toBe(200);
      // The link's resource keeps that resource as its own series in the panel of every resource (the top 10 fold
      // Connectors into "other" on the replay); the chart is the same, point for point, once summed. A panel of one
      // resource also takes it by its plural alone, as Prometheus matches it in any group.
      const answer = async (panel: string, resource: string) =>
        (await fetch(`${app.url}/api/panels/${panel}?${new URLSearchParams({ ...Object.fromEntries(target.searchParams), resource })}`)).json();
      type Answer = { data: { series: { labels: Record<string, string>; points: [number, number | null][] }[] } };
      const unpinned = (await replay.json()) as Answer;
      const pinned = (await answer("writes-by-resource", "connectors.networking.datumapis.com")) as Answer;
      const resources = (a: Answer) => a.data.series.map((x) => x.labels.resource ?? "other");
      expect(resources(unpinned)).not.toContain("connectors");
      expect(resources(pinned)).toContain("connectors");
      const totals = (a: Answer) => {
        const sums = new Map<number, number>();
        for (const x of a.data.series) for (const [t, v] of x.points) sums.set(t, (sums.get(t) ?? 0) + (v ?? 0));
        return [...sums.entries()].sort((p, q) => p[0] - q[0]).map(([t, v]) => [t, Math.round(v * 1e9) / 1e9]);
      };
      expect(totals(pinned)).toEqual(totals(unpinned));
      const byVerb = await answer("writes-by-verb", "connectors.networking.datumapis.com");
      expect(byVerb.status).toBe("success");
      expect(await answer("writes-by-verb", "connectors")).toEqual(byVerb);
    } finally {
      await app.stop();
    }
  });
});
