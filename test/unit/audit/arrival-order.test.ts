/**
 * Metadata-level audit batches and the watch's versions of the same writes, arriving in any order and at once, as a
 * webhook that holds back every other batch (and retries some) beside a lagging watch deliver them: the object writes'
 * classes always agree with the requests' no-op flags, and both with what the simulated API server did. And the one
 * order that once set another object's no-op back to unknown (kube-metadata's Objects count, one short now and then).
 */
import { describe, expect, it } from "vitest";
import { AuditIngester } from "@/lib/audit/ingest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { ProfileRecorder } from "@/lib/recorder/core";
import { createRng } from "@/lib/scenario/rng";
import { storeEngines, type StoreEngine } from "../../helpers/store-engines";
import { httpRoute, preconditionStorm, requestLines } from "../../helpers/audit-log";

const START = Date.UTC(2026, 10, 29, 9, 0, 0);
const ROUTES = ["s", "t", "u"];
// Arrival orders per engine (each about a second).
const SEEDS = 8;

type Delivery = { atMs: number; lines: string[] } | { atMs: number; type: string; obj: unknown };

/** Three routes' writes: each a storm of updates and patches with their preconditions, then a delete; and what the API server did. */
function scenario(seed: number) {
  const storms = ROUTES.map((name, k) => preconditionStorm(START + k * 17, 60, seed * 3 + k, name));
  const deletes = storms.map((storm, k) => ({ name: ROUTES[k], ms: storm.writes.at(-1)!.receivedMs + 20, version: Number(storm.writes.at(-1)!.version) }));
  const meta = { resource: "httproutes", group: "gateway.networking.k8s.io", namespace: "apps", level: "Metadata" as const, user: "policy" };
  const lines = [
    ...storms.flatMap((s) => s.lines),
    ...deletes.flatMap((d) => requestLines({ ...meta, name: d.name, verb: "delete", code: 200, receivedMs: d.ms })),
  ];
  // The versions the watch sees: each route's create, every write that changed it, its delete.
  const versions: { ms: number; type: string; obj: unknown }[] = [];
  for (const [k, storm] of storms.entries()) {
    versions.push({ ms: START + k * 17 + 1, type: "ADDED", obj: httpRoute(ROUTES[k], 100, ["h100"], 1) });
    for (const w of storm.writes)
      if (w.changed) versions.push({ ms: w.receivedMs + 5, type: "MODIFIED", obj: httpRoute(ROUTES[k], Number(w.version), [`h${w.version}`], 1) });
    versions.push({ ms: deletes[k].ms + 5, type: "DELETED", obj: httpRoute(ROUTES[k], deletes[k].version + 1, [`h${deletes[k].version}`], 1) });
  }
  versions.sort((a, b) => a.ms - b.ms);
  // Per request, what the server did where the log's preconditions can tell it (the next write was sent against a version).
  const truth = new Map<string, boolean>();
  for (const storm of storms) {
    const succeeded = storm.writes.filter((w) => w.code === 200);
    for (const [i, w] of succeeded.entries()) {
      const next = succeeded[i + 1];
      if (w.precondition !== "" && next !== undefined && next.precondition !== "") truth.set(`${w.auditID}/ResponseComplete`, !w.changed);
    }
  }
  return { lines, versions, truth };
}

/** When each batch and version arrives: batches of about a second, every other one held up to 1.5 s, a fifth sent twice; the watch up to `lagMs` late, in order. */
function arrivals(seed: number, lines: string[], versions: { ms: number; type: string; obj: unknown }[], lagMs: number): Delivery[] {
  const random = createRng(seed * 7_919);
  const deliveries: Delivery[] = [];
  const timed = lines.map((line) => ({ line, ms: Date.parse((JSON.parse(line) as { stageTimestamp: string }).stageTimestamp) })).sort((a, b) => a.ms - b.ms);
  let batch: string[] = [];
  let batchStartMs = timed[0].ms;
  const send = (endMs: number) => {
    if (batch.length === 0) return;
    deliveries.push({ atMs: endMs + 1_000 + (deliveries.length % 2 === 0 ? 1_500 * random() : 0), lines: batch });
    if (random() < 0.2) deliveries.push({ atMs: endMs + 1_000 + 5_000 * random(), lines: batch });
    batch = [];
  };
  for (const { line, ms } of timed) {
    if (ms - batchStartMs > 200 + 800 * random()) {
      send(ms);
      batchStartMs = ms;
    }
    batch.push(line);
  }
  send(timed.at(-1)!.ms);
  let lastMs = 0;
  for (const v of versions) {
    lastMs = Math.max(lastMs, v.ms + lagMs * random() * random());
    deliveries.push({ atMs: lastMs, type: v.type, obj: v.obj });
  }
  return deliveries.sort((a, b) => a.atMs - b.atMs);
}

/** A fresh store that audit ingest and a recorder watching HTTPRoutes (its list done) both write to. */
async function ingestBesideWatch(engine: StoreEngine) {
  const store = await engine.writeStore();
  const ingester = new AuditIngester(store, "prod", DEFAULT_PROFILES);
  const recorder = new ProfileRecorder(
    store,
    "prod",
    DEFAULT_PROFILES.filter((p) => p.name === "httproute"),
  );
  await recorder.applyList([], "1", START - 10_000);
  return { store, ingester, recorder };
}

describe.each(storeEngines())("audit batches and watched versions in any order on %s", (_name, engine) => {
  it.each(Array.from({ length: SEEDS }, (_, i) => i + 1))(
    "seed %i: every object write's class agrees with its request's flag and with the server",
    async (seed) => {
      const { store, ingester, recorder } = await ingestBesideWatch(engine);
      const { lines, versions, truth } = scenario(seed);
      const random = createRng(seed);
      // Batches one after another, as the webhook's spool is drained; versions as the watch hands them, beside them.
      const running: Promise<unknown>[] = [];
      let drained = Promise.resolve();
      for (const delivery of arrivals(seed, lines, versions, seed % 2 === 0 ? 3_000 : 8_000)) {
        if ("lines" in delivery) {
          drained = drained.then(async () => {
            await ingester.newRun();
            delivery.lines.forEach((line, i) => ingester.line(line, i + 1, "webhook"));
            await ingester.flush();
          });
          running.push(drained);
        } else running.push(recorder.applyEvents([{ type: delivery.type, obj: delivery.obj as never, tsMs: Math.round(delivery.atMs) }]));
        if (random() < 0.5) await Promise.all(running);
      }
      await Promise.all(running);
      const sql = store.database.sql();
      const flags = new Map(
        (await sql.all<{ k: string; noop: number | null }>("SELECT request_key AS k, noop FROM audit_requests WHERE noop IS NOT NULL")).map((r) => [
          r.k,
          r.noop === 1,
        ]),
      );
      expect(flags).toEqual(truth);
      const disagreeing = await sql.all(
        `SELECT w.class, w.source, w.rv, a.precondition, a.noop, a.evidence FROM writes w LEFT JOIN audit_requests a ON a.request_key = w.request_key
       WHERE (w.class = 'no-op') <> COALESCE(a.noop = 1, FALSE)`,
      );
      expect(disagreeing).toEqual([]);
      const noops = (await sql.get<{ n: number }>("SELECT COUNT(*) AS n FROM writes WHERE class = 'no-op'"))!.n;
      expect(noops).toBe([...truth.values()].filter((noop) => noop).length);
      // The changed writes' versions were joined to their requests, as the watch saw them.
      expect((await sql.get<{ n: number }>("SELECT COUNT(*) AS n FROM audit_requests WHERE evidence = 'watched-successor'"))!.n).toBeGreaterThan(10);
    },
  );
});

describe.each(storeEngines())("an older batch after a newer write joined the version the watch saw it make, on %s", (_name, engine) => {
  it("compares that write again without touching the row its id went to", async () => {
    const { store, ingester, recorder } = await ingestBesideWatch(engine);
    // The watch saw route r go from version 10 to 11 to 12.
    await recorder.applyEvents(
      [10, 11, 12].map((rv, i) => ({ type: i === 0 ? "ADDED" : "MODIFIED", obj: httpRoute("r", rv, [`h${rv}`], 1) as never, tsMs: START + i * 1_000 })),
    );
    const update = {
      resource: "httproutes",
      group: "gateway.networking.k8s.io",
      namespace: "apps",
      level: "Metadata" as const,
      user: "policy",
      verb: "update",
      code: 200,
    };
    const batch = async (lines: string[]) => {
      await ingester.newRun();
      lines.forEach((line, i) => ingester.line(line, i + 1, "webhook"));
      await ingester.flush();
    };
    // The newer batch first: the update sent against 11, the last so far, takes the version it made (12); its own row goes.
    await batch(requestLines({ ...update, name: "r", receivedMs: START + 1_990, precondition: "11" }));
    // Route x's two updates sent against one version: the first changed nothing (on SQLite, its row takes the id that went).
    await batch([5, 6].flatMap((k) => requestLines({ ...update, name: "x", receivedMs: START + 2_000 + k * 100, precondition: "5" })));
    // Then the older batch: the update sent against 10 comes before the one against 11, which is compared again.
    await batch(requestLines({ ...update, name: "r", receivedMs: START + 990, precondition: "10" }));
    const rows = await store.database
      .sql()
      .all<{ cls: string; noop: number | null }>(
        "SELECT w.class AS cls, a.noop FROM writes w JOIN objects o ON o.id = w.object_id JOIN audit_requests a ON a.request_key = w.request_key WHERE o.name = 'x' ORDER BY w.ts_ms",
      );
    expect(rows).toEqual([
      { cls: "no-op", noop: 1 },
      { cls: "unknown", noop: null },
    ]);
  });
});
