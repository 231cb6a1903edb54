/**
 * Every API call counted per client, on both store engines: the counts per minute and shape, the watches' starts and
 * exact median lifetimes, nothing counted twice (a log read again or grown, a webhook batch sent twice, a watch's end
 * before its start), names past the cap counted as "other", and the API cost answer's figures and comparison, all
 * against the generator's own record of what it wrote.
 */
import { mkdtempSync, writeFileSync, appendFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { describe, expect, it } from "vitest";
import { ingestFile } from "@/lib/audit/files";
import { AuditIngester } from "@/lib/audit/ingest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { NAME_CAPS } from "@/lib/store/api-calls";
import type { WriteStore } from "@/lib/store/store";
import { callsLog, median, truthCounts, truthKey, type LogClient } from "../../helpers/api-calls-log";
import { auditEvent } from "../../helpers/audit-log";
import { storeEngines } from "../../helpers/store-engines";

const START = Date.UTC(2026, 9, 14, 10, 0, 0);
const CLIENTS: LogClient[] = [
  { user: "system:serviceaccount:unbounded-net:node-a", agent: "unbounded-net-node", version: "v0.8.0" },
  { user: "system:serviceaccount:unbounded-net:node-b", agent: "unbounded-net-node", version: "v0.8.0" },
  { user: "system:serviceaccount:unbounded-net:controller", agent: "unbounded-net-controller", version: "v0.8.0" },
  { user: "system:node:worker-1", agent: "kubelet", version: "v1.36.3" },
];

/** What the store counted, by the truth's key: the rows read back with their names. */
async function storedCounts(store: WriteStore): Promise<Map<string, number>> {
  const rows = await store.database.sql().all<{
    ts: number;
    client: string;
    version: string;
    verb: string;
    target: string;
    shape: number;
    calls: number;
  }>(
    `SELECT c.ts_ms AS ts, n.name AS client, v.name AS version, vb.name AS verb, t.name AS target, c.shape, c.calls
     FROM api_calls c JOIN api_names n ON n.id = c.client_id JOIN api_names v ON v.id = c.version_id JOIN api_names t ON t.id = c.target_id
       JOIN api_names vb ON vb.id = c.verb_id`,
  );
  // The store's numbers, read with the meanings its schema states (lib/store/api-calls.ts).
  const CODES = ["2xx", "3xx", "4xx", "429", "5xx", "none"];
  const SOURCES = ["", "cache", "consistent", "exact", "continue"];
  const out = new Map<string, number>();
  for (const r of rows) {
    const [user, agent] = JSON.parse(r.client) as [string, string];
    // shape: flags in bits 0–3, the answer's class in bits 4–6, a list's source in bits 7–9
    const flags = Number(r.shape) & 15;
    const key = truthKey({
      minuteMs: Number(r.ts),
      user,
      agent,
      version: r.version,
      verb: r.verb,
      target: r.target,
      namespaced: (flags & 1) === 1,
      code: CODES[(Number(r.shape) >> 4) & 7],
      listFrom: SOURCES[Number(r.shape) >> 7],
      paginated: (flags & 2) === 2,
      selectors: flags >> 2,
    });
    out.set(key, (out.get(key) ?? 0) + Number(r.calls));
  }
  return out;
}

const sorted = (m: Map<string, number>) => [...m].sort(([a], [b]) => a.localeCompare(b));

describe.each(storeEngines())("API calls counted per client on %s", (_name, engine) => {
  const logFile = (lines: string[], gzip = false) => {
    const path = join(mkdtempSync(join(tmpdir(), "churnscope-calls-")), gzip ? "audit.log.gz" : "audit.log");
    writeFileSync(path, gzip ? gzipSync(lines.join("\n") + "\n") : lines.join("\n") + "\n");
    return path;
  };

  it("counts every call by minute, client, version, verb, target, scope, answer and list shape; each watch's start once; each watch's lifetime", async () => {
    const store = await engine.writeStore();
    const log = callsLog(START, 30, CLIENTS);
    const ingester = new AuditIngester(store, "prod", DEFAULT_PROFILES);
    await ingestFile(ingester, logFile(log.lines, true));
    expect(sorted(await storedCounts(store))).toEqual(sorted(truthCounts(log)));
    // Only the watches that ended in the log have an end; each with the lifetime the generator gave it.
    const ends = await store.database.sql().all<{ lifetime: number }>("SELECT lifetime_ms AS lifetime FROM api_watch_ends ORDER BY lifetime_ms");
    expect(ends.map((e) => Number(e.lifetime))).toEqual(log.watches.map((w) => w.endMs - w.startMs).sort((a, b) => a - b));
    expect(ingester.counts.requests).toBe(log.writes.length);
  });

  it("answers each component's figures, the exact median watch lifetime per client and kind, and the notes", async () => {
    const store = await engine.writeStore();
    const log = callsLog(START, 20, CLIENTS, 11);
    const ingester = new AuditIngester(store, "prod", DEFAULT_PROFILES);
    await ingestFile(ingester, logFile(log.lines));
    const answer = await store.apiCost().answer({ startMs: START, endMs: START + 30 * 60_000 });
    const truth = truthCounts(log);
    const total = [...truth.values()].reduce((a, b) => a + b, 0);
    expect(answer.total.calls).toBe(total);
    const node = answer.components.find((c) => c.component === "unbounded-net-node")!;
    // One component of two service accounts, each listed.
    expect(node.members.map((m) => m.user).sort()).toEqual([CLIENTS[0].user, CLIENTS[1].user]);
    const mine = (user: string) => log.calls.filter((c) => c.client.user === user).length + log.watches.filter((w) => w.client.user === user).length;
    expect(node.calls).toBe(mine(CLIENTS[0].user) + mine(CLIENTS[1].user));
    for (const member of node.members) expect(member.calls).toBe(mine(member.user));
    const controller = answer.components.find((c) => c.component === "unbounded-net-controller")!;
    const lists = log.calls.filter((c) => c.client.user === CLIENTS[2].user && c.verb === "list");
    expect(controller.lists.cache).toBe(lists.filter((c) => c.listFrom === "cache").length);
    expect(controller.lists.consistent).toBe(lists.filter((c) => c.listFrom === "consistent").length);
    expect(controller.paginatedLists).toBe(lists.filter((c) => c.paginated).length);
    expect(controller.rejected).toBe(log.calls.filter((c) => c.client.user === CLIENTS[2].user && c.code === 429).length);
    // Re-establishments: each watcher's starts after its first.
    const starts = new Map<string, number>();
    for (const w of log.watches.filter((w) => w.client.user === CLIENTS[2].user))
      starts.set(`${w.target}|${w.namespaced}`, (starts.get(`${w.target}|${w.namespaced}`) ?? 0) + 1);
    expect(controller.watchStarts).toBe([...starts.values()].reduce((a, b) => a + b, 0));
    expect(controller.reestablishments).toBe([...starts.values()].reduce((a, b) => a + b - 1, 0));
    for (const lifetime of controller.watchLifetimes) {
      const ended = log.watches.filter((w) => w.client.user === CLIENTS[2].user && w.target === lifetime.target && w.endMs < START + 30 * 60_000);
      expect(lifetime.ended).toBe(ended.length);
      expect(lifetime.medianMs).toBe(median(ended.map((w) => w.endMs - w.startMs)));
    }
    // No FlowSchema was recorded for this cluster: the page says the calls cannot be shown by flow schema.
    expect(answer.notes).toEqual([expect.stringContaining("No FlowSchema was recorded")]);
    expect(answer.flowSchemas).toEqual([]);
  });

  it("counts nothing twice: the same log read again, a log that grew, and a webhook batch sent twice", async () => {
    const store = await engine.writeStore();
    const log = callsLog(START, 20, CLIENTS, 3);
    const half = Math.floor(log.lines.length / 2);
    const path = logFile(log.lines.slice(0, half));
    const ingester = new AuditIngester(store, "prod", DEFAULT_PROFILES);
    await ingestFile(ingester, path);
    await ingestFile(ingester, path);
    expect(ingester.counts.callsCountedBefore).toBeGreaterThan(0);
    // The log grows (the API server appends), and is read again: only its new lines count.
    appendFileSync(path, log.lines.slice(half).join("\n") + "\n");
    await ingestFile(new AuditIngester(store, "prod", DEFAULT_PROFILES), path);
    expect(sorted(await storedCounts(store))).toEqual(sorted(truthCounts(log)));

    // A webhook batch sent twice (its answer lost) counts once.
    const other = await engine.writeStore();
    const webhook = new AuditIngester(other, "prod", DEFAULT_PROFILES);
    const batch = log.lines.map((l) => JSON.parse(l));
    for (let i = 0; i < 2; i++) {
      await webhook.beginSource("webhook:same-batch-digest");
      webhook.events(batch, "webhook");
      await webhook.flush();
    }
    expect(sorted(await storedCounts(other))).toEqual(sorted(truthCounts(log)));
  });

  it("counts a watch's start once whichever of its stages comes first, and its end once", async () => {
    const store = await engine.writeStore();
    const ingester = new AuditIngester(store, "prod", DEFAULT_PROFILES);
    const spec = {
      verb: "watch",
      resource: "nodes",
      receivedMs: START + 5_000,
      auditID: "w-1",
      user: "agent",
      userAgent: "agent/v1",
      level: "Metadata" as const,
    };
    const started = auditEvent({ ...spec, stage: "ResponseStarted", latencyMs: 1 });
    const ended = auditEvent({ ...spec, latencyMs: 300_000 });
    // The end's batch arrives first (the webhook sends batches concurrently), the start's after it, then the end again.
    for (const [id, event] of [
      ["b1", ended],
      ["b2", started],
      ["b3", ended],
    ] as const) {
      await ingester.beginSource(`webhook:${id}`);
      ingester.events([event as never], "webhook");
      await ingester.flush();
    }
    const starts = await store.database
      .sql()
      .get<{ n: number }>("SELECT SUM(c.calls) AS n FROM api_calls c JOIN api_names v ON v.id = c.verb_id WHERE v.name = 'watch'");
    expect(Number(starts!.n)).toBe(1);
    const ends = await store.database.sql().all<{ lifetime: number }>("SELECT lifetime_ms AS lifetime FROM api_watch_ends");
    expect(ends.map((e) => Number(e.lifetime))).toEqual([300_000]);
  });

  it("counts clients past the cap on names as other, and says so", async () => {
    const store = await engine.writeStore();
    const ingester = new AuditIngester(store, "prod", DEFAULT_PROFILES);
    const clients = NAME_CAPS.client + 25;
    const lines = Array.from({ length: clients }, (_, i) =>
      JSON.stringify(
        auditEvent({ verb: "get", resource: "nodes", name: "n", receivedMs: START + i, user: `user-${i}`, userAgent: `tool-${i}/v1`, level: "Metadata" }),
      ),
    );
    await ingestFile(ingester, logFile(lines));
    const answer = await store.apiCost().answer({ startMs: START, endMs: START + 60_000 });
    expect(answer.total.calls).toBe(clients);
    const other = answer.components.find((c) => c.client === "other · other");
    expect(other?.calls).toBe(25);
    expect(answer.notes.join(" ")).toContain(`25 calls are counted as "other · other"`);
  });

  it("compares two windows per component and per version, and says what fell most in one sentence", async () => {
    const store = await engine.writeStore();
    const v1: LogClient = { user: "system:serviceaccount:net:agent", agent: "net-agent", version: "v1" };
    const v2: LogClient = { ...v1, version: "v2" };
    const events: string[] = [];
    const watch = (client: LogClient, resource: string, receivedMs: number, i: number) => {
      const spec = {
        verb: "watch",
        resource,
        group: "net.example.io",
        receivedMs,
        auditID: `${client.version}-${resource}-${i}`,
        user: client.user,
        userAgent: `${client.agent}/${client.version}`,
        level: "Metadata" as const,
      };
      events.push(JSON.stringify(auditEvent({ ...spec, stage: "ResponseStarted", latencyMs: 1 })));
    };
    // Before: 6 watch starts an hour on each of three kinds; after (v2): none on gatewaypools, half as many on the others.
    for (let i = 0; i < 6; i++) for (const r of ["gatewaypools", "sites", "nodes"]) watch(v1, r, START + i * 600_000 + 1_000, i);
    for (let i = 0; i < 3; i++) for (const r of ["sites", "nodes"]) watch(v2, r, START + 3_600_000 + i * 1_200_000 + 1_000, i);
    const ingester = new AuditIngester(store, "prod", DEFAULT_PROFILES);
    await ingestFile(ingester, logFile(events));
    const answer = await store.apiCost().answer({
      startMs: START,
      endMs: START + 7_200_000,
      compare: { before: { startMs: START, endMs: START + 3_600_000 }, after: { startMs: START + 3_600_000, endMs: START + 7_200_000 } },
    });
    const row = answer.comparison!.rows.find((r) => r.component === "net-agent" && r.detail === "")!;
    expect(row.calls).toEqual({ before: 18, after: 6, changePct: ((6 - 18) / 18) * 100 });
    expect(row.byTarget["gatewaypools.net.example.io"]).toEqual({ before: 6, after: 0, changePct: -100 });
    expect(row.watchStarts).toEqual({ before: 18, after: 6, changePct: ((6 - 18) / 18) * 100 });
    // Three watchers before (5 re-establishments each), two after (2 each).
    expect(row.reestablishments).toEqual({ before: 15, after: 4, changePct: ((4 - 15) / 15) * 100 });
    expect(row.sentence).toBe(
      "net-agent: −66.7 % of API calls; watch starts on gatewaypools.net.example.io −100 %, watch starts on nodes.net.example.io −50.0 %, watch re-establishments −73.3 %",
    );
    expect(answer.comparison!.rows.filter((r) => r.component === "net-agent").map((r) => r.detail)).toEqual(["", "v1", "v2"]);
  });
});
