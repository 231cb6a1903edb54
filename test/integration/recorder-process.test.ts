/**
 * The recorder as operators run it: `npm run recorder` with KUBECONFIG pointing at the test API
 * server serves its metrics and fills the store; the dashboard on the same data dir shows those
 * objects; and a dashboard with `clusters:` configured records in-process and serves /metrics.
 */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEFAULT_REPLAY } from "@/lib/demo/params";
import { generateReplay } from "@/lib/demo/replay";
import { startApp, writeConfig, uploadSnapshot } from "../helpers/app";
import { FakeApiServer } from "../helpers/fake-apiserver";
import { freePort, start, waitForHttp, type Running } from "../helpers/processes";
import { ROOT } from "../helpers/root";

const PATH = "/apis/networking.datumapis.com/v1alpha1/connectors";
// A server without streaming lists (WatchList off): the recorder pages through a list instead.
const server = new FakeApiServer(100, "refuse");
let kubeconfig: string;
const replay = generateReplay({
  ...DEFAULT_REPLAY,
  startMs: Date.parse("2026-09-11T13:00:00Z"),
  endMs: Date.parse("2026-09-11T14:00:00Z"),
  connectors: 12,
  projects: 2,
});
const project = replay.sink.objects.map((o, i) => (o.cluster === "milo" && o.kind === "Connector" ? i : -1)).filter((i) => i >= 0);

beforeAll(async () => {
  await server.start();
  for (const i of project) if (replay.sink.initial[i]) server.emit(PATH, "ADDED", replay.sink.initial[i] as Record<string, unknown>);
  const dir = mkdtempSync(join(tmpdir(), "churnscope-kube-"));
  kubeconfig = join(dir, "config");
  writeFileSync(
    kubeconfig,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters: [{ name: fake, cluster: { server: 'http://127.0.0.1:" + server.port + "', insecure-skip-tls-verify: true } }]",
      "users: [{ name: u, user: { token: t } }]",
      "contexts: [{ name: staging-west, context: { cluster: fake, user: u } }]",
      "current-context: staging-west",
    ].join("\n"),
  );
});
afterAll(async () => {
  await server.stop();
});

function emitSome(count: number) {
  const alive = new Set(project.filter((i) => replay.sink.initial[i]));
  let emitted = 0;
  for (const w of replay.sink.writes) {
    if (!project.includes(w.objectIndex) || w.object === null || emitted >= count) continue;
    server.emit(PATH, alive.has(w.objectIndex) ? "MODIFIED" : "ADDED", w.object as Record<string, unknown>);
    alive.add(w.objectIndex);
    emitted++;
  }
  return emitted;
}

async function waitForWatching(metricsUrl: string) {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    if (
      (await (await fetch(metricsUrl)).text()).includes('churnscope_recorder_watching{cluster="staging-west",resource="connectors.networking.datumapis.com"} 1')
    )
      return;
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error("the recorder never started watching");
}

/** "Download snapshot" on the Objects views: re-opened, it answers the objects, fields and every write as the live store does. */
async function expectSnapshotEqualsLive(url: string, fromMs: number) {
  const download = await fetch(`${url}/api/snapshots/export?view=objects&from=${fromMs}&to=now`);
  expect(download.status).toBe(200);
  expect(download.headers.get("content-disposition")).toMatch(/churnscope-objects-.*\.json\.gz/);
  const upload = await (await uploadSnapshot(url, Buffer.from(await download.arrayBuffer()))).json();
  expect(upload.data.views).toEqual(["objects"]);
  const [{ startMs, endMs }] = upload.data.ranges;
  const both = async (path: string) => {
    const sep = path.includes("?") ? "&" : "?";
    const live = await (await fetch(`${url}${path}${sep}from=${startMs}&to=${endMs}`)).json();
    const frozen = await (await fetch(`${url}${path}${sep}from=${startMs}&to=${endMs}&snapshot=${upload.data.id}`)).json();
    expect(live.status, path).toBe("success");
    return { live: live.data, frozen: frozen.data };
  };
  const objects = await both("/api/objects?pageSize=100");
  expect(objects.frozen.rows).toEqual(objects.live.rows);
  expect(objects.live.rows.length).toBeGreaterThan(5);
  const fields = await both("/api/fields");
  expect(fields.frozen).toEqual(fields.live);
  const classes = new Set<string>();
  for (const row of objects.live.rows as { cluster: string; group: string; kind: string; namespace: string; name: string }[]) {
    const writes = await both(`/api/objects/${[row.cluster, row.group, row.kind, row.namespace, row.name].map(encodeURIComponent).join("/")}/writes`);
    // Where a write came from and its resourceVersion are the recorder's; everything shown is the same.
    const shown = (data: { initialProjection: unknown; writes: Record<string, unknown>[] }) => ({
      initialProjection: data.initialProjection,
      writes: data.writes.map(({ source: _source, resourceVersion: _rv, seq: _seq, ...w }) => w),
    });
    expect(shown(writes.frozen), row.name).toEqual(shown(writes.live));
    for (const w of writes.live.writes as { class: string }[]) classes.add(w.class);
  }
  expect([...classes].sort()).toEqual(expect.arrayContaining(["create", "unrouted"]));
}

describe("recording as operators run it", () => {
  it("npm run recorder records the kubeconfig's current context, serves /metrics, and the dashboard shows the objects", async () => {
    const dataDir = mkdtempSync(join(tmpdir(), "churnscope-data-"));
    const metricsPort = await freePort();
    const env = {
      ...process.env,
      KUBECONFIG: kubeconfig,
      CHURNSCOPE_DATA_DIR: dataDir,
      CHURNSCOPE_CONFIG: writeConfig(`recorder:\n  metricsPort: ${metricsPort}\n`),
    };
    const recorder: Running = start(process.execPath, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "lib", "cli", "recorder.ts")], {
      cwd: ROOT,
      env,
    });
    try {
      await waitForHttp(`http://127.0.0.1:${metricsPort}/healthz`, recorder, 30_000);
      await waitForWatching(`http://127.0.0.1:${metricsPort}/metrics`);
      // After the first list: the objects' first versions are known at the start of the exported range.
      const listedMs = Date.now() + 1;
      await new Promise((r) => setTimeout(r, 5));
      const emitted = emitSome(60);
      let metrics = "";
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline) {
        metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
        const stored = /churnscope_recorder_versions_stored_total\{cluster="staging-west",resource="connectors.networking.datumapis.com"\} (\d+)/.exec(metrics);
        if (stored && Number(stored[1]) === emitted) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(metrics).toContain(`churnscope_recorder_versions_stored_total{cluster="staging-west",resource="connectors.networking.datumapis.com"} ${emitted}`);
      expect(metrics).toContain('churnscope_recorder_watching{cluster="staging-west",resource="connectors.networking.datumapis.com"} 1');
      expect(metrics).toMatch(/churnscope_store_bytes\{\} \d+/);
      expect(recorder.output()).toMatch(/recording staging-west/);

      const app = await startApp({ CHURNSCOPE_DATA_DIR: dataDir });
      try {
        const body = await (await fetch(`${app.url}/api/objects?from=now-1h&to=now&cluster=staging-west&kind=Connector`)).json();
        expect(body.status).toBe("success");
        expect(body.data.rows.reduce((a: number, r: { writes: number }) => a + r.writes, 0)).toBe(emitted);
        expect(body.infos).toEqual([]);
        await expectSnapshotEqualsLive(app.url, listedMs);
      } finally {
        await app.stop();
      }
    } finally {
      await recorder.stop();
    }
  }, 120_000);

  it("npm run recorder with nothing to record says what to configure", async () => {
    const recorder = start(process.execPath, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "lib", "cli", "recorder.ts")], {
      cwd: ROOT,
      env: { ...process.env, KUBECONFIG: "", KUBERNETES_SERVICE_HOST: "", CHURNSCOPE_CONFIG: writeConfig("{}\n") },
    });
    const code = await new Promise<number | null>((resolve) => recorder.child.once("exit", resolve));
    expect(code).toBe(1);
    expect(recorder.output()).toMatch(/nothing to record: list clusters under `clusters:`/);
  });

  it("a dashboard with clusters configured records in-process and serves /metrics", async () => {
    const app = await startApp({ CHURNSCOPE_CONFIG: writeConfig(`clusters:\n  - name: edge-lab\n    kubeconfig: ${kubeconfig}\n`) });
    try {
      let metrics = "";
      const deadline = Date.now() + 20_000;
      while (Date.now() < deadline && !metrics.includes('churnscope_recorder_watching{cluster="edge-lab",resource="connectors.networking.datumapis.com"} 1')) {
        metrics = await (await fetch(`${app.url}/metrics`)).text();
        await new Promise((r) => setTimeout(r, 100));
      }
      expect(metrics).toContain('churnscope_recorder_watching{cluster="edge-lab",resource="connectors.networking.datumapis.com"} 1');
      // Kinds this server does not serve are reported, not fatal.
      expect(app.running.output()).toMatch(/edge-lab: httproutes.gateway.networking.k8s.io: .*not served/);
    } finally {
      await app.stop();
    }
  }, 120_000);
});
