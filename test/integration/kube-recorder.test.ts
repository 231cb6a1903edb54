/**
 * The recorder against a real kube-apiserver and etcd, with the server's own audit log as the
 * ground truth: controllers reproduce the write-ups while the recorder watches; the watch is dropped
 * by an API server restart; the recorder is then stopped while writes go on, etcd is compacted and the
 * API server restarted, so its resume point is gone and it must relist. Every version the server made
 * visible is stored once, except versions the relist collapsed, which lie inside a stored gap; classes
 * and writers follow the controllers' intent and the real managedFields. Run with the server's
 * streaming lists on (the default) and off.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { resourceKey } from "@/lib/recorder/core";
import { runWatcher, type WatcherStats } from "@/lib/recorder/watcher";
import { WriteStore } from "@/lib/store/store";
import { serverWrites, type ServerWrite } from "../helpers/audit-truth";
import { startControlPlane, type ControlPlane } from "../helpers/control-plane";
import {
  connectorChurn,
  CONTROLLER_USERS,
  createNamespaces,
  deleteOne,
  periodicStatusPatches,
  PROJECT_NAMESPACE,
  ROUTE_NAMESPACE,
  unchangedWritesThenFix,
  type LedgerEntry,
} from "../helpers/controllers";

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
// Leases: the API server renews its own identity lease every 10 s, heartbeats the lease profile reads.
const RESOURCES = ["connectors.networking.datumapis.com", "httproutes.gateway.networking.k8s.io", "leases.coordination.k8s.io"];
const KIND_OF: Record<string, string> = { connectors: "Connector", httproutes: "HTTPRoute", leases: "Lease" };

describe.each([
  { mode: "streaming lists on", featureGates: undefined },
  { mode: "streaming lists off", featureGates: "WatchList=false" },
])("the recorder against a real API server ($mode)", ({ featureGates }) => {
  let cp: ControlPlane;
  let store: WriteStore;
  const ledger: LedgerEntry[] = [];
  let hubNamespace = "";
  let watchers: { controller: AbortController; done: Promise<void>; stats: WatcherStats[] } | undefined;
  /** when the first lists ran: versions made before are what they found, not writes */
  let watchedFromMs = 0;

  const startWatchers = () => {
    const controller = new AbortController();
    const all: WatcherStats[] = [];
    const done = Promise.all(
      RESOURCES.map((resource) => {
        const stats: WatcherStats = { events: 0, stored: 0, relists: 0, reconnects: 0, rejected: 0, lastEventMs: 0, state: "starting" };
        all.push(stats);
        const profiles = DEFAULT_PROFILES.filter((p) => resourceKey(p) === resource);
        return runWatcher({ kc: cp.kubeConfig(), store, cluster: "kind-dev", profiles, minBackoffMs: 100, maxBackoffMs: 1000 }, controller.signal, stats);
      }),
    ).then(() => undefined);
    watchers = { controller, done, stats: all };
  };
  const stopWatchers = async () => {
    watchers?.controller.abort();
    await watchers?.done;
  };
  async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 30_000) {
    const deadline = Date.now() + timeoutMs;
    while (!(await condition())) {
      if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stats ${JSON.stringify(watchers?.stats)}`);
      await sleep(50);
    }
  }
  const stored = () =>
    store.db
      .prepare(
        "SELECT o.kind, o.namespace, o.name, w.rv, w.class, w.writer, w.heartbeat, w.changes, w.ts_ms AS tsMs FROM writes w JOIN objects o ON o.id = w.object_id WHERE w.source = 'watch' ORDER BY w.id",
      )
      .all() as { kind: string; namespace: string; name: string; rv: string; class: string; writer: string; heartbeat: number; tsMs: number }[];

  beforeAll(async () => {
    cp = await startControlPlane({ users: CONTROLLER_USERS, featureGates });
    const uids = await createNamespaces(cp.kubeConfig(), [PROJECT_NAMESPACE, ROUTE_NAMESPACE]);
    hubNamespace = `ns-${uids[PROJECT_NAMESPACE]}`;
    await createNamespaces(cp.kubeConfig(), [hubNamespace]);
    store = await WriteStore.open(join(mkdtempSync(join(tmpdir(), "churnscope-kube-recorder-")), "store.sqlite"));
    watchedFromMs = Date.now();
    startWatchers();
    await until(() => watchers!.stats.every((s) => s.state === "watching"), "both watches");
    // Each first list went the way the server offers: a streaming list where it has them, else a paged list.
    expect(watchers!.stats.map((s) => s.relists)).toEqual(RESOURCES.map(() => 1));
  }, 180_000);

  afterAll(async () => {
    await stopWatchers();
    await store?.close();
    await cp?.stop();
  });

  it("stores every version the server made visible, once, across a restart and a compaction, and reports what a relist collapsed as a gap", async () => {
    await connectorChurn(cp, ledger, { prefix: "first", hubNamespace, ticks: 4 });
    await periodicStatusPatches(cp, ledger, { rounds: 3, pauseMs: 100 });

    // A dropped watch: the API server restarts; the recorder resumes from its last version.
    await cp.restartApiServer();
    await connectorChurn(cp, ledger, { prefix: "second", hubNamespace, ticks: 4 });
    await unchangedWritesThenFix(cp, ledger, { rounds: 2 });

    // The recorder is away while writes go on; etcd is compacted and the API server restarted, so the
    // watch cache cannot serve its resume point either.
    await stopWatchers();
    const awayFromMs = Date.now();
    await connectorChurn(cp, ledger, { prefix: "away", hubNamespace, ticks: 4, connectors: 2 });
    await cp.compact();
    await cp.restartApiServer();
    const awayToMs = Date.now();
    startWatchers();
    await until(() => watchers!.stats.every((s) => s.state === "watching" && s.relists >= 1), "a relist after the resume point was compacted");
    expect(watchers!.stats.map((s) => s.relists)).toEqual(RESOURCES.map(() => 1));
    await deleteOne(cp, ledger, hubNamespace);
    await connectorChurn(cp, ledger, { prefix: "after", hubNamespace, ticks: 2, connectors: 1 });

    // The API server renews its lease every 10 s: wait for one renewal after the last restart, a heartbeat to read.
    const renewed = () => serverWrites(cp.auditLogPath).some((w) => w.resource === "leases" && w.verb === "update" && w.stageMs > awayToMs);
    for (let i = 0; i < 100 && !renewed(); i++) await sleep(200);
    expect(renewed(), "the API server renewed its lease").toBe(true);

    // The server's record: every version it answered a write with, per object; a no-op answers the previous one.
    const truth = serverWrites(cp.auditLogPath).filter((w) => KIND_OF[w.resource] && w.stageMs > watchedFromMs);
    const lastRv = truth.at(-1)!.resourceVersion;
    await until(() => stored().some((s) => s.rv === lastRv), "the recorder to store the last write");
    await sleep(500);
    const rows = stored();

    const objectOf = (w: { namespace: string; name: string }, kind: string) => `${kind}/${w.namespace}/${w.name}`;
    const versions = new Map<string, ServerWrite[]>();
    for (const w of truth) {
      const id = objectOf(w, KIND_OF[w.resource]);
      const list = versions.get(id) ?? [];
      if (w.verb === "delete" || list.at(-1)?.resourceVersion !== w.resourceVersion) list.push(w);
      versions.set(id, list);
    }
    const storedBy = new Map<string, typeof rows>();
    for (const r of rows) storedBy.set(objectOf(r, r.kind), [...(storedBy.get(objectOf(r, r.kind)) ?? []), r]);
    const gaps = await store.gaps(0, Date.now() + 1);
    const inGap = (ms: number) => gaps.some((g) => g.fromMs <= ms && ms <= (g.toMs ?? Infinity));

    let collapsed = 0;
    for (const [id, made] of versions) {
      const got = storedBy.get(id) ?? [];
      const gotRvs = got.map((r) => r.rv);
      expect(new Set(gotRvs).size, `${id}: no version stored twice`).toBe(gotRvs.length);
      const expected = made.map((w) => (w.verb === "delete" ? "deleted" : w.resourceVersion));
      // A version missing from the store must have been collapsed while the recorder was away, and lie in a gap.
      for (const [i, w] of made.entries()) {
        const want = expected[i];
        const has = want === "deleted" ? gotRvs.some((rv) => rv.startsWith("deleted@")) : gotRvs.includes(want);
        if (has) continue;
        // Written while the recorder was away, or (a restarted API server's watch cache can refuse the resume point,
        // which a busy machine makes likelier) across a relist: either way inside a stored gap, never silently.
        if (w.stageMs >= awayFromMs && w.stageMs <= awayToMs) collapsed++;
        expect(inGap(w.stageMs), `${id} ${want} (${w.verb} by ${w.userAgent}) missing, and not inside a stored gap ${JSON.stringify(gaps)}`).toBe(true);
      }
      // Nothing stored that the server did not make.
      for (const rv of gotRvs) if (!rv.startsWith("deleted@")) expect(expected, `${id}: stored ${rv}, which the server never answered`).toContain(rv);
    }
    expect(collapsed).toBeGreaterThan(0);
    expect(gaps.some((g) => g.reason.startsWith("410 Gone") && g.toMs !== null)).toBe(true);
    expect(gaps.every((g) => g.toMs !== null)).toBe(true);
    expect(rows.some((r) => r.rv.startsWith("deleted@"))).toBe(true);

    // Classes and writers: the controllers' intent and field managers, read through the real managedFields.
    const intentOf = new Map(ledger.filter((l) => l.intent !== "no-op").map((l) => [`${l.kind}/${l.namespace}/${l.name}@${l.resourceVersion}`, l]));
    let checked = 0;
    for (const r of rows) {
      if (r.rv.startsWith("deleted@")) {
        expect(r.class).toBe("delete");
        continue;
      }
      // After a collapse, a version is compared with an older one than the server's previous version.
      const made = versions.get(objectOf(r, r.kind))!;
      const at = made.findIndex((w) => w.resourceVersion === r.rv);
      const previous = made[at - 1];
      const deletesStored = rows.filter((x) => objectOf(x, x.kind) === objectOf(r, r.kind) && x.rv.startsWith("deleted@")).length;
      const previousStored =
        previous?.verb === "delete"
          ? made.slice(0, at).filter((w) => w.verb === "delete").length <= deletesStored
          : rows.some((x) => x.rv === previous?.resourceVersion);
      if (previous && !previousStored) continue;
      if (r.kind === "Lease") {
        // The API server's own lease: created at each start, then renewed (a heartbeat), by the manager the server recorded.
        expect(
          r.class === "create" || (r.class === "unrouted" && r.heartbeat === 1),
          `${objectOf(r, r.kind)}@${r.rv}: ${r.class}, heartbeat ${r.heartbeat}, ${(r as { changes?: string }).changes}`,
        ).toBe(true);
        if (r.class === "unrouted") expect(r.writer).toBe(made[at].newestManager);
        continue;
      }
      const meant = intentOf.get(`${objectOf(r, r.kind)}@${r.rv}`);
      expect(meant, `${objectOf(r, r.kind)}@${r.rv} has no controller write`).toBeDefined();
      expect(r.class, `class of ${objectOf(r, r.kind)}@${r.rv} (${meant!.userAgent})`).toBe(meant!.intent);
      if (r.class !== "delete") expect(r.writer, `writer of ${objectOf(r, r.kind)}@${r.rv}`).toBe(meant!.fieldManager);
      checked++;
    }
    expect(checked).toBeGreaterThan(50);
    expect(rows.filter((r) => r.kind === "Lease" && r.heartbeat === 1).length).toBeGreaterThan(0);
    // No write the server answered with its previous version (a no-op) reached the store.
    for (const l of ledger.filter((l) => l.intent === "no-op")) {
      const earlier = ledger.find(
        (e) => e.kind === l.kind && e.name === l.name && e.namespace === l.namespace && e.resourceVersion === l.resourceVersion && e.intent !== "no-op",
      );
      expect(earlier, `no-op ${l.userAgent} on ${l.name} got a new resourceVersion ${l.resourceVersion}`).toBeDefined();
    }
  }, 300_000);

  it("says a kind the server does not serve is not recorded (until it is), without opening a gap or backing off", async () => {
    const stats: WatcherStats = { events: 0, stored: 0, relists: 0, reconnects: 0, rejected: 0, lastEventMs: 0, state: "starting" };
    const profiles = DEFAULT_PROFILES.filter((p) => p.name === "gatewaypoolnode");
    const stop = new AbortController();
    const running = runWatcher({ kc: cp.kubeConfig(), store, cluster: "kind-dev", profiles, minBackoffMs: 100 }, stop.signal, stats);
    const deadline = Date.now() + 10_000;
    while (stats.state !== "unserved" && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(stats).toMatchObject({ state: "unserved", reconnects: 0, error: expect.stringContaining("gatewaypoolnodes is not served") });
    expect((await store.gaps(0, Date.now() + 1)).filter((g) => g.profile.startsWith("gatewaypoolnodes"))).toEqual([]);
    stop.abort();
    await running;
  });
});
