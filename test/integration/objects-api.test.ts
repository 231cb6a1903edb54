/**
 * The object-churn API on the replay: the replay's object writes go through the recorder's core into
 * SQLite, and the ranking, class counts, field churn and per-object writes equal the generator's own
 * account of what it wrote and why. The slow work behind them (building a snapshot's object store, checking an
 * upload) runs in threads, so the dashboard keeps answering meanwhile.
 */
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NAMED } from "@/lib/demo/params";
import { HUB_JOB } from "@/lib/demo/types";
import { generateReplay, type Replay } from "@/lib/demo/replay";
import { fieldTruth, objectTruth } from "@/lib/demo/truth";
import { REPLAY_BUNDLE_PATH } from "@/lib/snapshot/store";
import { startApp, uploadSnapshot, writeConfig, type TestApp } from "../helpers/app";
import { ROOT } from "../helpers/root";

const EXTRA_PROFILE = `profiles:
  - name: objects-api-extra
    group: example.com
    version: v1
    resource: widgets
    kind: Widget
    routed: { state: { path: "$.status.state" } }
`;

let replay: Replay;
let app: TestApp;
let range: string;

beforeAll(async () => {
  replay = generateReplay();
  // One profile more than the build's: the replay's object store built at build time does not fit, so this server
  // builds its own, the slow path the first test watches (the build's copy is tested with the image's build).
  app = await startApp({ CHURNSCOPE_CONFIG: writeConfig(EXTRA_PROFILE) });
  range = `from=${replay.params.startMs}&to=${replay.params.endMs}&snapshot=replay`;
}, 120_000);
afterAll(async () => {
  await app?.stop();
});

/** How many health checks, sent one after another, the dashboard answers before `work` settles. */
async function healthChecksWhile(work: Promise<unknown>): Promise<number> {
  let settled = false;
  void work.finally(() => (settled = true)).catch(() => undefined);
  let answered = 0;
  while (!settled) {
    expect((await fetch(`${app.url}/healthz`)).status).toBe(200);
    if (!settled) answered++;
  }
  return answered;
}

async function get(path: string) {
  const res = await fetch(`${app.url}${path}`);
  const body = await res.json();
  return { status: res.status, body };
}

describe("object churn API on the replay", () => {
  it("builds the replay's object store off the request thread, once, while the dashboard keeps answering", async () => {
    // A new data dir: the first object request builds the store (some seconds). Two requests arrive while it builds.
    // Warmed first, so that the build is what the first request waits on: the route's code is loaded (a 400
    // answers before any store is opened) and the bundle is unpacked (its info answers from it).
    expect((await get(`/api/objects?from=yesterday&snapshot=replay`)).status).toBe(400);
    expect((await get(`/api/snapshots/replay`)).status).toBe(200);
    const objects = () => get(`/api/objects?${range}&pageSize=5`);
    const first = objects();
    await new Promise((resolve) => setTimeout(resolve, 300));
    const second = objects();
    // Before, the build held the event loop: the one check sent meanwhile (a liveness probe) waited seconds for it.
    expect(await healthChecksWhile(first)).toBeGreaterThanOrEqual(5);
    const [a, b] = await Promise.all([first, second]);
    expect(a.status).toBe(200);
    expect(b.body).toEqual(a.body);
    expect(a.body.data.total).toBe(new Set(replay.sink.writes.map((w) => w.objectIndex)).size);
    // The build runs the replay's 104 k writes through the recorder's core: 52 s in one clean CI run, past 60 in the next.
  }, 180_000);

  it("checks an uploaded snapshot off the request thread: the replay's own bundle, uploaded, holds what the replay holds", async () => {
    const bundle = readFileSync(join(ROOT, REPLAY_BUNDLE_PATH));
    // Sent as a stream, to know when its last byte has left: the checks below start once the server has it all.
    let offset = 0;
    let sent!: () => void;
    const allSent = new Promise<void>((resolve) => (sent = resolve));
    const stream = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (offset >= bundle.length) {
          controller.close();
          sent();
          return;
        }
        controller.enqueue(bundle.subarray(offset, (offset += 65_536)));
      },
    });
    const upload = fetch(`${app.url}/api/snapshots`, {
      method: "POST",
      headers: { "content-type": "application/octet-stream" },
      body: stream,
      duplex: "half",
    } as RequestInit).then(async (res) => ({
      status: res.status,
      body: await res.json(),
    }));
    await allSent;
    await new Promise((resolve) => setTimeout(resolve, 200));
    // Unpacking, checking and packing it again takes seconds; before, the checks waited for all of it.
    expect(await healthChecksWhile(upload)).toBeGreaterThanOrEqual(5);
    const { status, body } = await upload;
    expect(status).toBe(200);
    const replayInfo = (await get(`/api/snapshots/replay`)).body.data;
    expect(body.data).toEqual({ ...replayInfo, id: body.data.id });
    expect((await get(`/api/snapshots/${body.data.id}`)).body.data).toEqual(body.data);
  });

  it("ranks Connectors by writes with the generator's class counts, top fields and writers", async () => {
    const { status, body } = await get(`/api/objects?${range}&cluster=milo&group=networking.datumapis.com&kind=Connector&pageSize=200`);
    expect(status).toBe(200);
    const truth = objectTruth(replay).filter((o) => o.cluster === "milo" && o.kind === "Connector" && o.writes > 0);
    expect(body.data.total).toBe(truth.length);
    expect(body.data.rows[0]).toMatchObject({ namespace: NAMED.project, name: NAMED.flipsThenFlaps, group: "networking.datumapis.com" });
    for (const row of body.data.rows) {
      const t = truth.find((o) => o.namespace === row.namespace && o.name === row.name)!;
      expect({ writes: row.writes, create: row.create, delete: row.delete, routed: row.routed, unrouted: row.unrouted, noop: row.noop }, row.name).toEqual({
        writes: t.writes,
        ...t.byClass,
        noop: 0,
      });
    }
    expect(body.data.rows[0].topFields[0].path).toBe("status.conditions[type=Ready].message");
    expect(body.data.rows[0].writers.map((w: { writer: string }) => w.writer).sort()).toEqual(["datum-connect", "network-services-operator"]);
  });

  it("names the churning fields and their writers, per cluster, as the generator changed them", async () => {
    for (const cluster of ["milo", "hub"]) {
      const { body } = await get(`/api/fields?${range}&cluster=${cluster}&kind=Connector`);
      const truth = fieldTruth(replay).filter((f) => f.cluster === cluster && f.kind === "Connector");
      const shown = new Map(body.data.rows.map((r: { path: string; changes: number; writers: { writer: string; changes: number }[] }) => [r.path, r]));
      for (const t of truth) {
        const row = shown.get(t.path) as { changes: number; writers: { writer: string; changes: number }[] } | undefined;
        expect(row?.changes, `${cluster} ${t.path}`).toBe(t.changes);
        expect(Object.fromEntries(row!.writers.map((w) => [w.writer, w.changes]))).toEqual(t.writers);
      }
      expect(body.data.rows.length).toBe(truth.length);
    }
  });

  it("lists one object's writes with class, writer, source and changes", async () => {
    const { status, body } = await get(`/api/objects/milo/networking.datumapis.com/Connector/${NAMED.project}/${NAMED.flipsThenFlaps}/writes?${range}`);
    expect(status).toBe(200);
    const index = replay.sink.objects.findIndex((o) => o.cluster === "milo" && o.kind === "Connector" && o.name === NAMED.flipsThenFlaps);
    const truth = replay.sink.writes.filter((w) => w.objectIndex === index);
    expect(body.data.writes.map((w: { tsMs: number; class: string; writer: string }) => [w.tsMs, w.class, w.writer])).toEqual(
      truth.map((w) => [w.timeMs, w.cls, w.manager]),
    );
    expect(new Set(body.data.writes.map((w: { source: string }) => w.source))).toEqual(new Set(["replay"]));
    const flip = body.data.writes.find((w: { class: string }) => w.class === "routed");
    expect(flip.projection).toEqual({ online: "false", nodeId: "" });
    expect(body.data.initialProjection).toEqual({ online: "true", nodeId: expect.stringMatching(/^[0-9a-f]{64}$/) });
  });

  it("counts every write of an object's range into pixel columns, and answers a picked write whole with its neighbours", async () => {
    const object = `/api/objects/milo/networking.datumapis.com/Connector/${NAMED.project}/${NAMED.flipsThenFlaps}`;
    const index = replay.sink.objects.findIndex((o) => o.cluster === "milo" && o.kind === "Connector" && o.name === NAMED.flipsThenFlaps);
    const truth = replay.sink.writes.filter((w) => w.objectIndex === index);
    const { status, body } = await get(`${object}/timeline?${range}&width=500`);
    expect(status).toBe(200);
    expect(body.data.total).toBe(truth.length);
    const byClass: Record<string, number> = {};
    for (const w of truth) byClass[w.cls] = (byClass[w.cls] ?? 0) + 1;
    expect(body.data.byClass).toEqual(byClass);
    const { startMs, endMs } = body.data;
    const perColumn = new Map<number, number>();
    for (const w of truth) {
      const i = Math.min(499, Math.floor(((w.timeMs - startMs) / (endMs - startMs)) * 500));
      perColumn.set(i, (perColumn.get(i) ?? 0) + 1);
    }
    expect(body.data.ticks.map((t: { i: number; n: number }) => [t.i, t.n])).toEqual([...perColumn.entries()].sort((a, b) => a[0] - b[0]));
    // The one routed flip ends the online segment.
    const flip = truth.find((w) => w.cls === "routed")!;
    expect(body.data.segments.map((s: { fromMs: number }) => s.fromMs)).toContain(flip.timeMs);

    const third = await get(`${object}/write?${range}&near=${truth[2].timeMs}`);
    expect(third.status).toBe(200);
    expect([third.body.data.write.tsMs, third.body.data.write.class, third.body.data.write.writer]).toEqual([truth[2].timeMs, truth[2].cls, truth[2].manager]);
    expect([third.body.data.index, third.body.data.total]).toEqual([3, truth.length]);
    const next = await get(`${object}/write?${range}&seq=${third.body.data.nextSeq}`);
    expect(next.body.data.write.tsMs).toBe(truth[3].timeMs);
    expect(next.body.data.previousSeq).toBe(third.body.data.write.seq);
    for (const [path, code] of [
      [`${object}/write?${range}&seq=999999999`, 404],
      [`${object}/write?${range}`, 400],
      [`${object}/write?${range}&near=soon`, 400],
      [`${object}/timeline?${range}&width=0`, 400],
      [`${object}/timeline?${range}&width=4001`, 400],
      [`${object}/history?${range}`, 400],
    ] as const) {
      const answer = await get(path);
      expect(answer.status, path).toBe(code);
      expect(answer.body.error, path).toMatch(/\w/);
    }
  });

  it("answers bad parameters with 400 and a message, never a 500", async () => {
    for (const path of [
      `/api/objects?${range}&class=sometimes`,
      `/api/objects?${range}&page=0`,
      `/api/objects?from=now&to=now-1h&snapshot=replay`,
      `/api/objects/milo/x/writes?${range}`,
      `/api/fields?from=yesterday&snapshot=replay`,
      `/api/objects?${range.replace("snapshot=replay", "snapshot=../../etc")}`,
    ]) {
      const { status, body } = await get(path);
      expect(status, path).toBe(400);
      expect(body.error, path).toMatch(/\w/);
    }
    const live = await get(`/api/objects?from=now-1h&to=now`);
    expect(live.status).toBe(200);
    expect(live.body.infos[0]).toMatch(/No cluster is being recorded by this dashboard/);
  });
});

/** The generator's own account of each request, as the Clients view groups them: user · the user agent's name. */
function requestTruth(fromMs: number, toMs: number) {
  const byClient = new Map<string, { writes: number; failed: number; versions: Map<string, number> }>();
  for (const q of replay.sink.requests) {
    if (q.timeMs <= fromMs || q.timeMs > toMs) continue;
    const [agent, rest] = q.userAgent.split(/\/(.*)/s);
    const row = byClient.get(`${q.user} · ${agent}`) ?? { writes: 0, failed: 0, versions: new Map<string, number>() };
    row.writes++;
    if (q.code >= 300) row.failed++;
    const version = rest.split(" ")[0];
    row.versions.set(version, (row.versions.get(version) ?? 0) + 1);
    byClient.set(`${q.user} · ${agent}`, row);
  }
  return byClient;
}

describe("the replay's Clients", () => {
  it("names every writer of the replay with the generator's counts: writes, refusals and user-agent versions", async () => {
    const { status, body } = await get(`/api/clients?${range}`);
    expect(status).toBe(200);
    expect(body.infos[0]).toMatch(/holds the writes it models one by one/);
    const truth = requestTruth(replay.params.startMs, replay.params.endMs);
    expect(body.data.total).toBe([...truth.values()].reduce((sum, r) => sum + r.writes, 0));
    const rows = body.data.clients as {
      client: string;
      writes: number;
      failed: number;
      noop: number;
      versions: { version: string; writes: number; firstMs: number }[];
    }[];
    expect(new Set(rows.map((r) => r.client))).toEqual(new Set(truth.keys()));
    for (const row of rows) {
      const expected = truth.get(row.client)!;
      expect({ client: row.client, writes: row.writes, failed: row.failed, noop: row.noop }).toEqual({
        client: row.client,
        writes: expected.writes,
        failed: expected.failed,
        noop: 0,
      });
      expect(Object.fromEntries(row.versions.map((v) => [v.version, v.writes]))).toEqual(Object.fromEntries(expected.versions));
    }
    // The write-up's cast is there: the connector controller and the replicator, the agents, the portal and the garbage collector.
    const agents = new Set(rows.map((r) => r.client.split(" · ")[1]));
    expect([...agents].sort()).toEqual(["datum-cloud-portal", "datum-connect", "kube-controller-manager", "network-services-operator"]);
    expect(body.data.clusters).toEqual(["hub", "milo"]);
    // The DatumConnect v0.1.4 release shows in the agents' versions after its marker, never before.
    const release = replay.params.markers.find((m) => m.label === "DatumConnect v0.1.4")!.timeMs;
    const upgraded = rows.flatMap((r) => r.versions.filter((v) => v.version === "v0.1.4"));
    expect(upgraded.length).toBeGreaterThan(0);
    for (const v of upgraded) expect(v.firstMs).toBeGreaterThanOrEqual(release);
  });

  it("compares each writer before and after the onset with the generator's counts, and narrows to a cluster", async () => {
    const { startMs, endMs, onsetMs } = replay.params;
    const windowMs = Math.floor(Math.min(onsetMs - startMs, endMs - onsetMs) / 60_000) * 60_000;
    const { body } = await get(`/api/clients?${range}&at=${onsetMs}`);
    expect(body.data.comparison.windowMs).toBe(windowMs);
    const before = requestTruth(onsetMs - windowMs, onsetMs);
    const after = requestTruth(onsetMs, onsetMs + windowMs);
    for (const row of body.data.comparison.rows as { client: string; before: number; after: number }[])
      expect(row).toMatchObject({ before: before.get(row.client)?.writes ?? 0, after: after.get(row.client)?.writes ?? 0 });
    // The connector controller's status writes rose with the lease flaps: more than twice as many after.
    const controller = (body.data.comparison.rows as { client: string; before: number; after: number }[]).find((r) =>
      r.client.startsWith("system:serviceaccount:network-services-operator-system:network-services-operator ·"),
    )!;
    expect(controller.after).toBeGreaterThan(2 * controller.before);

    const hub = await get(`/api/clients?${range}&cluster=hub`);
    const hubRequests = replay.sink.requests.filter((q) => q.job === HUB_JOB && q.timeMs > startMs && q.timeMs <= endMs);
    expect(hub.body.data.total).toBe(hubRequests.length);
    expect(hub.body.data.clients.map((c: { client: string }) => c.client)).toEqual([
      "system:serviceaccount:network-services-operator-system:gateway-resource-replicator · network-services-operator",
    ]);
  });

  it("says plainly when a snapshot carries no audit requests, and keeps the live page live", async () => {
    const { startMs, endMs } = replay.params;
    const bare = {
      format: "churnscope-snapshot",
      version: 1,
      title: "no audit",
      takenAtMs: endMs,
      source: "prometheus",
      views: ["write-load"],
      ranges: [{ startMs, endMs }],
      apiservers: [],
      panels: [],
      markers: [],
      objectWrites: null,
    };
    const uploaded = await uploadSnapshot(app.url, gzipSync(JSON.stringify(bare)));
    expect(uploaded.status).toBe(200);
    const id = ((await uploaded.json()) as { data: { id: string } }).data.id;
    const none = await get(`/api/clients?from=${startMs}&to=${endMs}&snapshot=${id}`);
    expect(none.status).toBe(404);
    expect(none.body.error).toMatch(/holds no audit requests/);

    const live = await get(`/api/clients?from=now-1h&to=now`);
    expect(live.status).toBe(200);
    expect(live.body.infos[0]).toMatch(/No audit log has been ingested/);
    const page = await fetch(`${app.url}/clients`, { redirect: "manual" });
    expect(page.status).toBe(200);
    const replayPage = await fetch(`${app.url}/clients?snapshot=replay`, { redirect: "manual" });
    expect(replayPage.status).toBe(307);
    expect(replayPage.headers.get("location")).toMatch(/^\/clients\?snapshot=replay&from=\d+&to=\d+$/);
  });
});
