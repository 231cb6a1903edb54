/**
 * The watch recorder through @kubernetes/client-node against a wire-level test API server that
 * replays the generator's Connector histories, with faults injected: dropped connections, a server
 * restart, a store that refuses writes for a while, events no recorder can read, and a compacted
 * history answered with 410 Gone. Every version the server emitted is
 * stored once (none duplicated); only versions the server itself compacted away while the recorder
 * was disconnected are missing, and that period is stored as a gap.
 */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { DEFAULT_REPLAY } from "@/lib/demo/params";
import { generateReplay } from "@/lib/demo/replay";
import type { ReplayWrite } from "@/lib/demo/types";
import { resourceKey } from "@/lib/recorder/core";
import { runWatcher, type WatcherStats } from "@/lib/recorder/watcher";
import { WriteStore } from "@/lib/store/store";
import { FakeApiServer } from "../helpers/fake-apiserver";

const PATH = "/apis/networking.datumapis.com/v1alpha1/connectors";
const profile = DEFAULT_PROFILES.find((p) => p.name === "connector-project")!;
const server = new FakeApiServer(100);
let store: WriteStore;
const controller = new AbortController();
const stats: WatcherStats = { events: 0, stored: 0, relists: 0, reconnects: 0, rejected: 0, lastEventMs: 0, state: "starting" };
let running: Promise<void>;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until(condition: () => boolean | Promise<boolean>, what: string, timeoutMs = 20_000) {
  const deadline = Date.now() + timeoutMs;
  while (!(await condition())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}; stats ${JSON.stringify(stats)}`);
    await sleep(20);
  }
}

// The project-side Connector histories of a four-hour cut around the onset.
const replay = generateReplay({
  ...DEFAULT_REPLAY,
  startMs: Date.parse("2026-09-11T12:00:00Z"),
  endMs: Date.parse("2026-09-11T16:00:00Z"),
  connectors: 20,
  projects: 3,
});
const connectorIndexes = new Set(replay.sink.objects.map((o, i) => (o.cluster === "milo" && o.kind === "Connector" ? i : -1)).filter((i) => i >= 0));
const writes = replay.sink.writes.filter((w) => connectorIndexes.has(w.objectIndex));
const alive = new Map<number, Record<string, unknown>>();
/** server resourceVersion → the generator's write it carries */
const emitted = new Map<number, { write: ReplayWrite; object: number }>();

function emitWrite(w: ReplayWrite): void {
  const existed = alive.has(w.objectIndex);
  if (w.object === null) {
    const last = alive.get(w.objectIndex)!;
    alive.delete(w.objectIndex);
    emitted.set(server.emit(PATH, "DELETED", last), { write: w, object: w.objectIndex });
    return;
  }
  alive.set(w.objectIndex, w.object as Record<string, unknown>);
  emitted.set(server.emit(PATH, existed ? "MODIFIED" : "ADDED", w.object as Record<string, unknown>), { write: w, object: w.objectIndex });
}

beforeAll(async () => {
  await server.start();
  store = await WriteStore.open(join(mkdtempSync(join(tmpdir(), "churnscope-recorder-")), "store.sqlite"));
  replay.sink.initial.forEach((obj, i) => {
    if (obj && connectorIndexes.has(i)) {
      alive.set(i, obj as Record<string, unknown>);
      server.emit(PATH, "ADDED", obj as Record<string, unknown>);
    }
  });
  running = runWatcher({ kc: server.kubeConfig(), store, cluster: "milo", profiles: [profile], minBackoffMs: 50, maxBackoffMs: 400 }, controller.signal, stats);
  await until(() => stats.state === "watching", "the first list and watch");
}, 60_000);

afterAll(async () => {
  controller.abort();
  await running;
  await server.stop();
  await store.close();
});

const storedVersions = () =>
  store.db
    .prepare("SELECT w.rv, w.class, w.writer, o.name FROM writes w JOIN objects o ON o.id = w.object_id WHERE w.source = 'watch' ORDER BY w.id")
    .all() as { rv: string; class: string; writer: string; name: string }[];

describe("the watch recorder against a test API server", () => {
  it("stores every emitted version once across dropped connections, a restart and 410 Gone", async () => {
    expect(stats.relists).toBe(1);
    expect(storedVersions()).toEqual([]); // the first list only records what exists
    const third = Math.floor(writes.length / 3);
    let i = 0;
    const emitUntil = async (end: number) => {
      for (; i < end; i++) {
        emitWrite(writes[i]);
        if (i % 50 === 0) await sleep(1);
      }
    };

    await emitUntil(third / 2);
    server.dropConnections();
    await emitUntil(third);
    await until(() => storedVersions().length === i, "catching up after a dropped connection");

    // Nothing is written while a real API server is down, and its watch cache starts again at the
    // current version: the recorder's resume point is gone, it relists, and loses nothing.
    const relistsBeforeRestart = stats.relists;
    await server.restart(300);
    await until(() => stats.relists === relistsBeforeRestart + 1 && stats.state === "watching", "a relist after the restart");
    await emitUntil(2 * third);
    await until(() => storedVersions().length === i, "catching up after a restart");
    expect(stats.reconnects).toBeGreaterThanOrEqual(1);

    // The store refuses writes for a while (a full disk, a lock held too long): the watcher neither
    // crashes nor skips what it could not store, and catches up once the store takes writes again.
    const reconnectsBefore = stats.reconnects;
    const storedBefore = storedVersions().length;
    store.db.pragma("query_only = ON");
    await emitUntil(i + 30);
    await until(() => stats.reconnects > reconnectsBefore && stats.state === "backoff", "the watcher to back off from a store that refuses writes");
    expect(storedVersions().length).toBe(storedBefore);
    store.db.pragma("query_only = OFF");
    await until(() => storedVersions().length === i, "catching up once the store takes writes again");

    // Events no recorder can read, as a proxy that mangles the stream might send them: skipped and
    // counted, while the good ones around them are stored and the watch stays open.
    const rejectedBefore = stats.rejected;
    const reconnectsBeforeOdd = stats.reconnects;
    await emitUntil(i + 5);
    server.emitRaw(PATH, "MODIFIED", null);
    server.emitRaw(PATH, "MODIFIED", { kind: "Connector", metadata: { namespace: "p" } });
    server.emitRaw(PATH, "RESIZED", { kind: "Connector", metadata: { name: "x", namespace: "p" } });
    await emitUntil(i + 5);
    await until(() => storedVersions().length === i, "the good events around the odd ones");
    expect(stats.rejected - rejectedBefore).toBe(3);
    expect(stats.reconnects).toBe(reconnectsBeforeOdd);

    // Disconnected while the server compacts: the recorder's resume point is gone.
    const before410 = i;
    const relistsBefore = stats.relists;
    await server.stop();
    const lost = new Set<number>();
    const lastInWindow = new Map<number, number>();
    for (; i < before410 + 40 && i < writes.length; i++) {
      const rv = server.resourceVersion + 1;
      emitWrite(writes[i]);
      const previous = lastInWindow.get(writes[i].objectIndex);
      if (previous !== undefined) lost.add(previous);
      lastInWindow.set(writes[i].objectIndex, rv);
    }
    server.compact();
    await server.start(server.port);
    await until(() => stats.relists === relistsBefore + 1, "a relist after 410 Gone");
    await emitUntil(writes.length);
    await until(() => storedVersions().length === writes.length - lost.size, "the rest of the history");

    const stored = storedVersions();
    const byVersion = new Map(stored.map((s) => [s.rv, s]));
    expect(byVersion.size).toBe(stored.length); // none duplicated
    for (const [rv, { write }] of emitted) {
      const expectedRv = write.object === null ? `deleted@${rv}` : String(rv);
      if (lost.has(rv)) {
        expect(byVersion.has(expectedRv), `compacted version ${rv} should be missing`).toBe(false);
        continue;
      }
      const s = byVersion.get(expectedRv);
      expect(s, `version ${rv} (${write.cause})`).toBeDefined();
      expect(s!.class, `class of ${rv} (${write.cause})`).toBe(write.cls);
      if (write.cls !== "create" && write.cls !== "delete" && write.cause !== "deletion-requested") expect(s!.writer, `writer of ${rv}`).toBe(write.manager);
    }
    const gaps = await store.gaps(0, Date.now() + 1);
    expect(gaps.some((g) => g.reason.startsWith("410 Gone") && g.toMs !== null)).toBe(true);
    expect(gaps.every((g) => g.toMs !== null)).toBe(true);
  }, 120_000);

  it("skips and counts the events a profile cannot read, and keeps watching", async () => {
    // A path that fails on every object (the configuration refuses one that does not parse; this
    // one comes straight from code): the first list could not be read either, so this recorder
    // resumes where the store says it was.
    const unreadable = { ...profile, name: "unreadable", source: { path: "$" }, routed: { ready: { path: "$.status.conditions[?(@.type=='Ready'" } } };
    const own = await WriteStore.open(join(mkdtempSync(join(tmpdir(), "churnscope-recorder-")), "store.sqlite"));
    await own.setMeta(`resume/milo/${resourceKey(profile)}`, String(server.resourceVersion));
    const kc = server.kubeConfig();
    const s: WatcherStats = { events: 0, stored: 0, relists: 0, reconnects: 0, rejected: 0, lastEventMs: 0, state: "starting" };
    const stop = new AbortController();
    const watching = runWatcher({ kc, store: own, cluster: "milo", profiles: [unreadable], minBackoffMs: 50 }, stop.signal, s);
    await until(() => s.state === "watching", "the watch");
    const first = writes.find((w) => w.object !== null)!;
    for (let k = 0; k < 5; k++)
      server.emit(PATH, "MODIFIED", {
        ...(first.object as Record<string, unknown>),
        metadata: { ...(first.object as { metadata: Record<string, unknown> }).metadata, generation: k },
      });
    await until(() => s.rejected === 5, "five events skipped");
    expect(s.stored).toBe(0);
    expect(s.reconnects).toBe(0);
    expect(s.error).toMatch(/skipped a watch event/);
    stop.abort();
    await watching;
    await own.close();
  });

  it("lists the paged way from a server that ignores streaming lists (before 1.27), and loses nothing", async () => {
    const old = new FakeApiServer(100, "ignore");
    await old.start();
    const first = writes.find((w) => w.object !== null)!.object as Record<string, unknown>;
    old.emit(PATH, "ADDED", first);
    const own = await WriteStore.open(join(mkdtempSync(join(tmpdir(), "churnscope-recorder-")), "store.sqlite"));
    const kc = old.kubeConfig();
    const s: WatcherStats = { events: 0, stored: 0, relists: 0, reconnects: 0, rejected: 0, lastEventMs: 0, state: "starting" };
    const stop = new AbortController();
    const watching = runWatcher({ kc, store: own, cluster: "milo", profiles: [profile], minBackoffMs: 50 }, stop.signal, s);
    await until(() => s.state === "watching", "the watch after a paged list");
    expect(s.relists).toBe(1);
    expect(old.requests.some((r) => r.includes("sendInitialEvents=true"))).toBe(true);
    expect(old.requests.some((r) => !r.includes("watch=true"))).toBe(true); // the paged list
    const meta = first.metadata as Record<string, unknown>;
    const rv = old.emit(PATH, "MODIFIED", { ...first, metadata: { ...meta, generation: 7 } });
    await until(() => (own.db.prepare("SELECT COUNT(*) AS n FROM writes WHERE rv = ?").get(String(rv)) as { n: number }).n === 1, "the change after the list");
    stop.abort();
    await watching;
    await old.stop();
    await own.close();
  });

  it("reports a kind the server does not serve instead of failing, says so once, and asks again until stopped", async () => {
    const unserved = { ...profile, name: "missing", resource: "gadgets", kind: "Gadget" };
    const kc = server.kubeConfig();
    const s: WatcherStats = { events: 0, stored: 0, relists: 0, reconnects: 0, rejected: 0, lastEventMs: 0, state: "starting" };
    const lines: string[] = [];
    const stop = new AbortController();
    const running = runWatcher({ kc, store, cluster: "milo", profiles: [unserved], unservedRetryMs: 50, log: (l) => lines.push(l) }, stop.signal, s);
    const listsBefore = server.requests.filter((r) => r.includes("/gadgets")).length;
    await until(() => server.requests.filter((r) => r.includes("/gadgets")).length >= listsBefore + 3, "the kind asked for three times");
    expect(s.state).toBe("unserved");
    expect(s.error).toMatch(/gadgets is not served/);
    expect(lines).toEqual([expect.stringMatching(/gadgets is not served \(CRD not installed\?\): not recorded until it is; asked again every 0.05 s/)]);
    stop.abort();
    await running;
    expect(s.state).toBe("stopped");
  });
});
