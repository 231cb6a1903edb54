/**
 * Audit logs as operators feed them: `npm run ingest` over a folder (a rotated .gz, the current log,
 * junk), then the dashboard on the same data dir answers Clients and Objects from it; the webhook
 * takes EventList batches with its own token; uploads are streamed and limited. Every count is
 * checked against the generator's ground truth.
 */
import { spawnSync } from "node:child_process";
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parse as parseYaml } from "yaml";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { spoolDrained, startApp, uploadSnapshot, writeConfig, type TestApp } from "../helpers/app";
import { auditEvent, POLICY_AGENT, POLICY_CONTROLLER, requestLines, ROUTE_OWNER, seed003 } from "../helpers/audit-log";
import { ROOT } from "../helpers/root";

// A day ago, on the hour: inside the store's retention whenever the test runs.
const START = Math.floor((Date.now() - 86_400_000) / 3_600_000) * 3_600_000;
const truth = seed003(START, 60, 3);
const half = Math.floor(truth.lines.length / 2);
const dataDir = mkdtempSync(join(tmpdir(), "churnscope-audit-data-"));
const logs = mkdtempSync(join(tmpdir(), "churnscope-audit-logs-"));
const JUNK = ["", "not json at all", '{"level":"info","msg":"rotated"}'];
const TOKEN = "webhook-token-7c1e";
let app: TestApp;
let uploadLimitApp: TestApp;

function ingest(...args: string[]) {
  const run = spawnSync(process.execPath, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "lib", "cli", "ingest.ts"), ...args], {
    cwd: ROOT,
    env: { ...process.env, CHURNSCOPE_DATA_DIR: dataDir, CHURNSCOPE_CONFIG: undefined },
    encoding: "utf8",
  });
  return { status: run.status, stdout: run.stdout, stderr: run.stderr };
}

const sum = (r: Record<string, number>) => Object.values(r).reduce((a, b) => a + b, 0);
const fmt = (n: number) => n.toLocaleString("en-US");

beforeAll(async () => {
  // Rotated logs as kube-apiserver names them: the older one compressed, its name sorting first.
  mkdirSync(join(logs, "kube-apiserver"));
  writeFileSync(join(logs, "kube-apiserver", "audit-2026-11-28T09-30-00.000.log.gz"), gzipSync(truth.lines.slice(0, half).join("\n") + "\n"));
  writeFileSync(join(logs, "kube-apiserver", "audit.log"), [...JUNK, ...truth.lines.slice(half)].join("\n"));
  writeFileSync(join(logs, "kube-apiserver", "README.txt"), "not a log: skipped by name");
}, 60_000);

afterAll(async () => {
  await app?.stop();
  await uploadLimitApp?.stop();
});

describe("npm run ingest", () => {
  it("reads a folder of plain and gzipped logs and sums up every line", () => {
    const run = ingest("--cluster", "prod-eu", logs);
    expect(run.stderr).toContain("ingest: ");
    expect(run.status).toBe(0);
    const requests = sum(truth.requestsByUser);
    const noop = sum(truth.noop);
    expect(run.stdout).toContain(`2 files`);
    expect(run.stdout).toContain(
      `${fmt(requests)} write requests stored (${fmt(requests)} object writes: ${fmt(noop)} no-op, ${fmt(truth.firstSeen)} not classifiable;`,
    );
    expect(run.stdout).toContain(
      `${fmt(truth.reads)} reads or watches, ${fmt(requests)} not completed and 0 dry runs not stored one by one; 0 already stored; 1 foreign, 1 blank, 1 malformed`,
    );
    expect(run.stdout).toMatch(/audit\.log:2: not JSON/);
  });

  it("adds nothing when run again on the same files", () => {
    const run = ingest("--cluster", "prod-eu", logs);
    expect(run.status).toBe(0);
    expect(run.stdout).toContain(`0 write requests stored`);
    expect(run.stdout).toContain(`${fmt(sum(truth.requestsByUser))} already stored`);
  });

  it("refuses bad arguments with a message", () => {
    expect(ingest(join(logs, "missing"))).toMatchObject({ status: 2, stderr: expect.stringContaining("no such file or folder") });
    expect(ingest("--cluster", "Bad_Name", logs)).toMatchObject({ status: 2, stderr: expect.stringContaining("--cluster") });
    expect(ingest()).toMatchObject({ status: 2, stderr: expect.stringContaining("usage: npm run ingest") });
  });
});

describe("the dashboard on the ingested store", () => {
  beforeAll(async () => {
    app = await startApp({
      CHURNSCOPE_DATA_DIR: dataDir,
      CHURNSCOPE_CONFIG: writeConfig(`audit:\n  webhookToken: { env: AUDIT_TOKEN }\n  maxWebhookMiB: 1\n`),
      AUDIT_TOKEN: TOKEN,
    });
  }, 90_000);

  const range = `from=${START - 60_000}&to=${START + 3_600_000 + 60_000}`;

  it("Clients counts every client's writes, no-ops and before/after", async () => {
    const atMs = START + 30 * 60_000;
    const body = await (await fetch(`${app.url}/api/clients?${range}&at=${atMs}`)).json();
    expect(body.status).toBe("success");
    const clients = Object.fromEntries(body.data.clients.map((c: { user: string; writes: number; noop: number; agent: string }) => [c.user, c]));
    expect(clients[POLICY_CONTROLLER]).toMatchObject({
      writes: truth.requestsByUser[POLICY_CONTROLLER],
      noop: sum(truth.noop),
      agent: POLICY_AGENT.split("/")[0],
    });
    expect(clients[ROUTE_OWNER].writes).toBe(truth.requestsByUser[ROUTE_OWNER]);
    expect(clients[POLICY_CONTROLLER].verbs).toEqual([{ verb: "patch /status", writes: truth.requestsByUser[POLICY_CONTROLLER] }]);
    expect(clients[ROUTE_OWNER].verbs).toEqual([{ verb: "patch", writes: truth.requestsByUser[ROUTE_OWNER] }]);
    // Series sum to the total, step by step.
    const total = body.data.series.flatMap((s: { points: [number, number][] }) => s.points.map((p) => p[1])).reduce((a: number, b: number) => a + b, 0);
    expect(total).toBe(sum(truth.requestsByUser));
    // Before/after: equal windows either side of the split; the policy controller's patch times are known.
    const windowMs = body.data.comparison.windowMs;
    expect(windowMs).toBe(Math.floor(Math.min(atMs - (START - 60_000), START + 3_660_000 - atMs) / 60_000) * 60_000);
    const patchTimes = truth.routes.flatMap((_, i) => Array.from({ length: 360 }, (_, k) => START + k * 10_000 + i * 137));
    const before = patchTimes.filter((t) => t > atMs - windowMs && t <= atMs).length;
    const after = patchTimes.filter((t) => t > atMs && t <= atMs + windowMs).length;
    const policy = body.data.comparison.rows.find((r: { client: string }) => r.client.startsWith(POLICY_CONTROLLER));
    expect(policy).toEqual({ client: `${POLICY_CONTROLLER} · ${POLICY_AGENT.split("/")[0]}`, before, after, changePct: ((after - before) / before) * 100 });
    expect(body.data.byObject[0].top[0].client.startsWith(POLICY_CONTROLLER)).toBe(true);
    // Per resource, the status subresource apart from the object itself.
    expect(body.data.byResource.map((r: { resource: string; writes: number }) => [r.resource, r.writes])).toEqual([
      ["httproutes.gateway.networking.k8s.io/status", truth.requestsByUser[POLICY_CONTROLLER]],
      ["httproutes.gateway.networking.k8s.io", truth.requestsByUser[ROUTE_OWNER]],
    ]);
  });

  it("a snapshot downloaded from Clients carries the range's audit requests: opened, Clients answers as the live page did", async () => {
    const atMs = START + 30 * 60_000;
    const live = await (await fetch(`${app.url}/api/clients?${range}&at=${atMs}`)).json();
    const download = await fetch(`${app.url}/api/snapshots/export?view=objects&page=/clients&at=${atMs}&${range}`);
    expect(download.status).toBe(200);
    const bytes = Buffer.from(await download.arrayBuffer());
    const bundle = JSON.parse(gunzipSync(bytes).toString("utf8"));
    expect(bundle.title).toBe("Clients");
    expect(bundle.initialView).toMatchObject({ page: "/clients", atMs });
    expect(bundle.auditRequests.requests.length).toBe(sum(truth.requestsByUser));
    const opened = await uploadSnapshot(app.url, bytes);
    expect(opened.status).toBe(200);
    const id = ((await opened.json()) as { data: { id: string } }).data.id;
    const held = await (await fetch(`${app.url}/api/clients?${range}&at=${atMs}&snapshot=${id}`)).json();
    expect(held.data).toEqual(live.data);
    // A bare link to it opens Clients at the moment it was downloaded with.
    const page = await fetch(`${app.url}/clients?snapshot=${id}`, { redirect: "manual" });
    expect(page.headers.get("location")).toContain(`at=${atMs}`);
  });

  it("Objects ranks the routes with their no-ops and flags the 10 s timer", async () => {
    const body = await (await fetch(`${app.url}/api/objects?${range}&kind=HTTPRoute`)).json();
    expect(body.status).toBe("success");
    for (const name of truth.routes) {
      const row = body.data.rows.find((r: { name: string }) => r.name === name);
      expect(row).toMatchObject({
        cluster: "prod-eu",
        noop: truth.noop[name],
        unrouted: truth.unrouted[name],
        routed: truth.routed[name] ?? 0,
        unknown: 1,
        periodicNoop: { everySeconds: 10, writer: POLICY_CONTROLLER },
      });
    }
    const noops = await (await fetch(`${app.url}/api/objects?${range}&class=no-op`)).json();
    expect(noops.data.total).toBe(truth.routes.length);
  });

  it("the webhook takes an EventList batch with its token, once", async () => {
    const batch = {
      kind: "EventList",
      apiVersion: "audit.k8s.io/v1",
      metadata: {},
      items: [
        auditEvent({
          auditID: "wh-1",
          verb: "update",
          resource: "configmaps",
          namespace: "kube-system",
          name: "c",
          user: "webhook-user",
          receivedMs: START + 100_000,
        }),
        auditEvent({
          auditID: "wh-1",
          stage: "RequestReceived",
          verb: "update",
          resource: "configmaps",
          namespace: "kube-system",
          name: "c",
          user: "webhook-user",
          receivedMs: START + 100_000,
        }),
        auditEvent({ auditID: "wh-2", verb: "get", resource: "configmaps", namespace: "kube-system", name: "c", receivedMs: START + 100_000 }),
      ],
    };
    const post = (token: string | null, payload: string) =>
      fetch(`${app.url}/api/audit/webhook?cluster=prod-eu`, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...(token ? { Authorization: `Bearer ${token}` } : {}) },
        body: payload,
      });
    expect((await post(null, JSON.stringify(batch))).status).toBe(401);
    expect((await post("wrong", JSON.stringify(batch))).status).toBe(401);
    const webhookUser = async () => {
      await spoolDrained(app.url);
      const answer = await (await fetch(`${app.url}/api/clients?${range}`)).json();
      return answer.data.clients.find((c: { user: string }) => c.user === "webhook-user");
    };
    // Answered once it is on disk; of its three events, one is a completed write.
    const first = await (await post(TOKEN, JSON.stringify(batch))).json();
    expect(first.data).toMatchObject({ cluster: "prod-eu", bytes: JSON.stringify(batch).length });
    expect(first.data.queued.batches).toBeGreaterThanOrEqual(1);
    expect(await webhookUser()).toMatchObject({ writes: 1 });
    // The API server retrying the batch adds nothing.
    expect((await post(TOKEN, JSON.stringify(batch))).status).toBe(200);
    expect(await webhookUser()).toMatchObject({ writes: 1 });
    const bad = await post(TOKEN, "{not json");
    expect(bad.status).toBe(400);
    expect((await bad.json()).error).toContain("not JSON");
    expect((await post(TOKEN, JSON.stringify({ kind: "Status" }))).status).toBe(400);
    const big = await post(TOKEN, JSON.stringify({ ...batch, padding: "x".repeat(1_200_000) }));
    expect(big.status).toBe(413);
    // A receiver that re-posts the batch without its type fields (nor its events'): the same events, read as such.
    const strip = ({ kind: _kind, apiVersion: _apiVersion, ...rest }: Record<string, unknown>) => rest;
    const bare = {
      metadata: {},
      items: [
        auditEvent({
          auditID: "wh-3",
          verb: "update",
          resource: "configmaps",
          namespace: "kube-system",
          name: "c",
          user: "webhook-user",
          receivedMs: START + 101_000,
        }),
      ].map(strip),
    };
    expect((await post(TOKEN, JSON.stringify(bare))).status).toBe(200);
    // Unprofiled writes cannot be no-ops that anyone saw, so the count is 0, as the page shows it (never null).
    expect(await webhookUser()).toMatchObject({ writes: 2, noop: 0 });
  });

  it("the webhook's batches arriving out of order (the API server posts them concurrently) give every write its class in order", async () => {
    // A second copy of the HTTPRoute fix's log, two hours on, on a cluster of its own, posted as batches of four
    // requests with every pair of neighbours swapped.
    const later = seed003(START + 2 * 3_600_000, 30, 3);
    const events = later.lines.map((line) => JSON.parse(line));
    for (let i = 0; i < events.length; i += 16) {
      const [first, second] = [events.slice(i, i + 8), events.slice(i + 8, i + 16)];
      for (const items of [second, first].filter((b) => b.length > 0)) {
        const res = await fetch(`${app.url}/api/audit/webhook/out-of-order`, {
          method: "POST",
          headers: { "Content-Type": "application/json", Authorization: `Bearer ${TOKEN}` },
          body: JSON.stringify({ kind: "EventList", apiVersion: "audit.k8s.io/v1", metadata: {}, items }),
        });
        expect(res.status).toBe(200);
      }
    }
    await spoolDrained(app.url);
    const window = `from=${START + 2 * 3_600_000 - 60_000}&to=${START + 3 * 3_600_000}`;
    const objects = await (await fetch(`${app.url}/api/objects?${window}&cluster=out-of-order&kind=HTTPRoute&pageSize=50`)).json();
    expect(objects.data.rows.length).toBe(later.routes.length);
    for (const row of objects.data.rows)
      expect(row, row.name).toMatchObject({ noop: later.noop[row.name], unrouted: later.unrouted[row.name], routed: later.routed[row.name] ?? 0, create: 0 });
  });

  it("the shipped webhook kubeconfig works as the API server uses it, and the shipped policy keeps bodies for every profiled kind", async () => {
    const text = readFileSync(join(ROOT, "deploy", "audit", "webhook-kubeconfig.yaml"), "utf8")
      .replace("https://churnscope.example.com", app.url)
      .replace("REPLACE-WITH-AUDIT-WEBHOOK-TOKEN", TOKEN);
    const kubeconfig = new KubeConfig();
    kubeconfig.loadFromString(text);
    const server = kubeconfig.getCurrentCluster()!.server;
    const token = kubeconfig.getCurrentUser()!.token!;
    const batch = {
      kind: "EventList",
      apiVersion: "audit.k8s.io/v1",
      items: [
        auditEvent({
          auditID: "kc-1",
          verb: "patch",
          resource: "leases",
          group: "coordination.k8s.io",
          namespace: "kube-node-lease",
          name: "n1",
          user: "system:node:n1",
          receivedMs: START + 300_000,
        }),
      ],
    };
    const res = await fetch(server, {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify(batch),
    });
    const body = await res.json();
    expect(res.status).toBe(200);
    expect(body.data).toMatchObject({ cluster: "prod-eu" });
    await spoolDrained(app.url);
    const leases = await (await fetch(`${app.url}/api/objects?from=${START + 299_000}&to=${START + 301_000}&kind=Lease&cluster=prod-eu`)).json();
    expect(leases.data.rows.map((r: { name: string; writes: number }) => [r.name, r.writes])).toEqual([["n1", 1]]);

    const policy = parseYaml(readFileSync(join(ROOT, "deploy", "audit", "audit-policy.yaml"), "utf8")) as {
      apiVersion: string;
      rules: { level: string; resources?: { group: string; resources: string[] }[] }[];
    };
    expect(policy.apiVersion).toBe("audit.k8s.io/v1");
    const withBodies = policy.rules.filter((r) => r.level === "RequestResponse").flatMap((r) => r.resources ?? []);
    for (const profile of DEFAULT_PROFILES) {
      expect(
        withBodies.some((r) => r.group === profile.group && r.resources.includes(profile.resource)),
        profile.name,
      ).toBe(true);
    }
  });

  it("an upload is streamed, ingested and summed up; junk is counted, not fatal", async () => {
    const lines = [
      ...requestLines({
        verb: "patch",
        resource: "leases",
        group: "coordination.k8s.io",
        namespace: "kube-node-lease",
        name: "node-1",
        user: "system:node:node-1",
        receivedMs: START + 200_000,
        level: "Metadata",
      }),
      "garbage",
    ];
    const response = await fetch(`${app.url}/api/audit/uploads?cluster=prod-eu`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: gzipSync(lines.join("\n")),
    });
    const body = await response.json();
    expect(response.status).toBe(200);
    expect(body.data.counts).toMatchObject({ lines: 3, requests: 1, objectWrites: 1, unknown: 1, malformed: 1 });
    expect(body.warnings[0]).toContain("could not be read");
    expect(body.data.problems[0]).toMatchObject({ source: "upload", line: 3 });
    expect(
      (await fetch(`${app.url}/api/audit/uploads?cluster=Bad_Name`, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: "x" }))
        .status,
    ).toBe(400);
    expect((await fetch(`${app.url}/api/audit/uploads`, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: "" })).status).toBe(
      400,
    );
  });

  it("an oversized upload is refused with 413, leaving the store and the upload folder as they were", async () => {
    uploadLimitApp = await startApp({ CHURNSCOPE_DATA_DIR: dataDir, CHURNSCOPE_CONFIG: writeConfig(`audit:\n  maxUploadMiB: 0.5\n`) });
    const before = await (await fetch(`${uploadLimitApp.url}/api/clients?${range}`)).json();
    const chunked = new ReadableStream({
      start(controller) {
        // No Content-Length: the limit is enforced while streaming.
        for (let i = 0; i < 8; i++) controller.enqueue(new TextEncoder().encode(truth.lines.slice(0, 120).join("\n")));
        controller.close();
      },
    });
    const response = await fetch(`${uploadLimitApp.url}/api/audit/uploads`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: chunked,
      duplex: "half",
    } as RequestInit);
    expect(response.status).toBe(413);
    expect((await response.json()).error).toContain("audit.maxUploadMiB");
    const after = await (await fetch(`${uploadLimitApp.url}/api/clients?${range}`)).json();
    expect(after.data.total).toBe(before.data.total);
    expect(readdirSync(join(dataDir, "uploads"))).toEqual([]);
    // The webhook is off without a token.
    expect(
      (await fetch(`${uploadLimitApp.url}/api/audit/webhook`, { method: "POST", headers: { "content-type": "application/octet-stream" }, body: "{}" })).status,
    ).toBe(404);
  }, 90_000);
});
