/**
 * One write, one row, on both engines, when the recorder and audit ingest store the same write at the same time (two
 * replicas on one PostgreSQL database do: one records the cluster, the other ingests the webhook's batches), and the
 * change it made recorded once, as the recorder compared it, by the writer the row names.
 */
import { describe, expect, it } from "vitest";
import type { RecordedChange } from "@/lib/churn/changes";
import type { NoopEvidence } from "@/lib/churn/preconditions";
import type { ObjectKey, StoredWrite } from "@/lib/wire/objects";
import { storeEngines } from "../../helpers/store-engines";

const key: ObjectKey = { cluster: "milo", group: "apps", kind: "Deployment", namespace: "shop", name: "web" };
const rollout = (summary: string): RecordedChange => ({
  summary,
  diff: [{ path: "spec.containers[name=web].image", before: "web:1.0", after: "web:1.1" }],
  subject: { serviceAccount: "web", images: ["web:1.1"] },
});
const watched = (writer: string): StoredWrite => ({
  tsMs: 10_000,
  cls: "routed",
  writer,
  source: "watch",
  heartbeat: false,
  changes: [{ path: "spec.template.spec.containers[name=web].image", before: "web:1.0", after: "web:1.1" }],
  projection: { template: "web:1.1" },
  resourceVersion: "384",
  change: rollout("image web 1.0 → 1.1"),
});
/** The same write in an audit log: with its bodies, the audit's own comparison (said differently here, to tell them apart); at Metadata level none. */
const audited = (withBodies: boolean): StoredWrite => ({
  tsMs: 10_400,
  cls: withBodies ? "routed" : "unknown",
  writer: "deployer",
  source: "audit",
  heartbeat: false,
  changes: [],
  projection: { template: "web:1.1" },
  resourceVersion: "384",
  request: { verb: "patch", subresource: "", userAgent: "kubectl/v1.34.0", code: 200, latencyMs: 3 },
  ...(withBodies && { change: rollout("as the audit log compared it") }),
});

describe.each(storeEngines())("one row per write on %s", (_name, engine) => {
  it.each([
    { first: "watch", bodies: true, watchWriter: "kubectl-set", changeWriter: "kubectl-set" },
    { first: "audit", bodies: true, watchWriter: "kubectl-set", changeWriter: "kubectl-set" },
    { first: "audit", bodies: false, watchWriter: "kubectl-set", changeWriter: "kubectl-set" },
    { first: "watch", bodies: true, watchWriter: "unknown", changeWriter: "deployer" },
  ] as const)(
    "a write stored by both sources while the $first source's transaction is still open (bodies logged: $bodies) is one row and one change, by $changeWriter",
    async ({ first, bodies, watchWriter, changeWriter }) => {
      const store = await engine.writeStore();
      // An audit log is already being ingested and the day's writes stored: the recorder looks for audited writes.
      const earlier = { tsMs: 1_000, user: "deployer", userAgent: "kubectl/v1.34.0", verb: "patch", group: "apps", resource: "deployments" };
      await store.batch(async () => {
        await store
          .audit()
          .addRequest(key.cluster, { ...earlier, key: "r-1", subresource: "", namespace: "shop", name: "api", code: 200, latencyMs: 3 }, false);
        await store.record({ ...key, name: "api" }, { ...watched("kubectl-set"), tsMs: 1_000, resourceVersion: "100", change: undefined });
      });
      const store1 = (source: "watch" | "audit") =>
        source === "watch" ? store.record(key, watched(watchWriter)) : store.record(key, audited(bodies), { requestKey: "r-384" });
      let recorded!: () => void;
      const firstRecorded = new Promise<void>((resolve) => (recorded = resolve));
      let release!: () => void;
      const released = new Promise<void>((resolve) => (release = resolve));
      // The first source's transaction stays open after its write; the second starts meanwhile, as another replica's would.
      const firstDone = store.batch(async () => {
        await store1(first);
        recorded();
        await released;
      });
      await firstRecorded;
      const secondDone = store.batch(() => store1(first === "watch" ? "audit" : "watch"));
      setTimeout(release, 300);
      await Promise.all([firstDone, secondDone]);

      const rows = await store.database
        .sql()
        .all<{ rv: string; source: string; verb: string | null; writer: string }>("SELECT rv, source, verb, writer FROM writes WHERE rv = '384' ORDER BY id");
      expect(rows).toEqual([{ rv: "384", source: "watch", verb: "patch", writer: changeWriter }]);
      const { changes } = await store.changesBetween(5_000, 20_000, 10);
      expect(changes.map((c) => [c.key.name, c.summary, c.writer])).toEqual([["web", "image web 1.0 → 1.1", changeWriter]]);
    },
  );
});

describe.each(storeEngines())("a request's row joined into the version it made, on %s", (name, engine) => {
  it("is no longer that request's: comparing the request again changes no row, not the one SQLite gave its id to", async () => {
    const store = await engine.writeStore();
    const blind = (tsMs: number, cls: StoredWrite["cls"]): StoredWrite => ({
      tsMs,
      cls,
      writer: "deployer",
      source: "audit",
      heartbeat: false,
      changes: [],
      projection: {},
      request: { verb: "update", subresource: "", userAgent: "kubectl/v1.34.0", code: 200, latencyMs: 3 },
    });
    /** A completed update of one of the shop's Deployments, sent against `precondition`. */
    const updateRequest = (requestKey: string, tsMs: number, name: string, precondition: string, noop: boolean | null, evidence?: NoopEvidence) =>
      store.audit().addRequest(
        key.cluster,
        {
          key: requestKey,
          tsMs,
          user: "deployer",
          userAgent: "kubectl/v1.34.0",
          verb: "update",
          group: "apps",
          resource: "deployments",
          subresource: "",
          namespace: "shop",
          name,
          code: 200,
          latencyMs: 3,
          precondition,
        },
        noop,
        evidence,
      );
    const a = await store.batch(async () => {
      // The watch saw version 101 follow 100; then the Metadata-level update sent against 100 is stored, and found to be
      // the last sent against it: its row goes, and the watched version takes its request.
      await store.record(key, { ...watched("kubectl-set"), tsMs: 10_000, resourceVersion: "101", previousVersion: "100", change: undefined });
      await updateRequest("r-a", 10_010, "web", "100", null);
      const { id } = await store.record(key, blind(10_010, "unknown"), { requestKey: "r-a" });
      expect(await store.placeByPrecondition("r-a", "100", true, "unknown")).toBe("routed");
      return id;
    });
    // Another object's no-op is stored next.
    const b = await store.batch(async () => {
      await updateRequest("r-b", 10_020, "api", "7", true, "same-precondition");
      return (await store.record({ ...key, name: "api" }, blind(10_020, "no-op"), { requestKey: "r-b" })).id;
    });
    const ids = { a, b };
    // SQLite hands the next transaction's row the highest id again once that row is deleted: the hazard this guards against.
    if (name === "SQLite") expect(ids.b).toBe(ids.a);
    const changed = await store.batch(() =>
      store.reclassify({ id: ids.a, requestKey: "r-a" }, { cls: "unknown", heartbeat: false, changes: [], projection: {}, change: undefined }),
    );
    expect(changed).toBe(false);
    const rows = await store.database
      .sql()
      .all<{ requestKey: string; cls: string; source: string }>(
        `SELECT request_key AS "requestKey", class AS cls, source FROM writes WHERE request_key IN ('r-a', 'r-b') ORDER BY request_key`,
      );
    expect(rows).toEqual([
      { requestKey: "r-a", cls: "routed", source: "watch" },
      { requestKey: "r-b", cls: "no-op", source: "audit" },
    ]);
  });
});

describe.each(storeEngines())("which of the requests answered with one version made it, on %s", (_name, engine) => {
  /** A status update of the web Deployment received at `tsMs`, answered with version `rv`, as audit ingest stores it. */
  const update = (tsMs: number, rv: string, cls: StoredWrite["cls"] = "unrouted"): StoredWrite => ({
    tsMs,
    cls,
    writer: "deployer",
    source: "audit",
    heartbeat: false,
    changes: cls === "no-op" ? [] : [{ path: "status.observedGeneration", before: 1, after: 2 }],
    projection: { template: "web:1.1" },
    resourceVersion: rv,
    request: { verb: "update", subresource: "status", userAgent: "deployer/1.0", code: 200, latencyMs: 2 },
  });
  const seen = (tsMs: number, rv: string): StoredWrite => ({ ...watched("deployer"), tsMs, cls: "unrouted", resourceVersion: rv, change: undefined });
  const addRequest = (store: Awaited<ReturnType<typeof engine.writeStore>>, requestKey: string, tsMs: number) =>
    store.audit().addRequest(
      key.cluster,
      {
        key: requestKey,
        tsMs,
        user: "deployer",
        userAgent: "deployer/1.0",
        verb: "update",
        group: "apps",
        resource: "deployments",
        subresource: "status",
        namespace: "shop",
        name: "web",
        code: 200,
        latencyMs: 2,
      },
      false,
    );
  const rowsOf = async (store: Awaited<ReturnType<typeof engine.writeStore>>) =>
    store.database
      .sql()
      .all<{ source: string; cls: string; requestKey: string | null; traits: string | null }>(
        `SELECT source, class AS cls, request_key AS "requestKey", traits FROM writes ORDER BY request_key`,
      );

  it("a request received after the watch saw its version is an echo of its own; the one that made it, arriving later, joins the watched row", async () => {
    const store = await engine.writeStore();
    // The watch saw version 50 at 10 s; the maker's batch is late. An echo received 3 s later arrives first.
    await store.batch(() => store.record(key, seen(10_000, "50")));
    await addRequest(store, "echo", 13_000);
    const echo = await store.batch(() => store.record(key, update(13_000, "50"), { requestKey: "echo" }));
    expect(echo).toMatchObject({ joined: false, echo: true });
    await addRequest(store, "maker", 9_990);
    expect(await store.batch(() => store.record(key, update(9_990, "50"), { requestKey: "maker" }))).toMatchObject({ joined: true });
    expect(await rowsOf(store)).toEqual([
      { source: "audit", cls: "no-op", requestKey: "echo", traits: '["e"]' },
      { source: "watch", cls: "unrouted", requestKey: "maker", traits: null },
    ]);
  });

  it("an echo joined to the watched version within the clocks' allowance gives it up to the earlier request that made it", async () => {
    const store = await engine.writeStore();
    await store.batch(() => store.record(key, seen(10_000, "50")));
    // Received 0.5 s after the watch saw 50: it could have made it, and joins it, until the maker's late batch comes.
    await addRequest(store, "echo", 10_500);
    expect(await store.batch(() => store.record(key, update(10_500, "50"), { requestKey: "echo" }))).toMatchObject({ joined: true });
    await addRequest(store, "maker", 9_990);
    expect(await store.batch(() => store.record(key, update(9_990, "50"), { requestKey: "maker" }))).toMatchObject({ joined: true });
    expect(await rowsOf(store)).toEqual([
      { source: "audit", cls: "no-op", requestKey: "echo", traits: '["e"]' },
      { source: "watch", cls: "unrouted", requestKey: "maker", traits: null },
    ]);
    const flags = await store.database
      .sql()
      .all<{ key: string; noop: number; evidence: string }>(`SELECT request_key AS key, noop, evidence FROM audit_requests ORDER BY request_key`);
    expect(flags).toEqual([
      { key: "echo", noop: 1, evidence: "same-version" },
      { key: "maker", noop: 0, evidence: "watch" },
    ]);
  });

  it("audited echoes stored before the watch's row came are made no-ops when it does, and the earliest request joins it", async () => {
    const store = await engine.writeStore();
    await addRequest(store, "maker", 9_990);
    await addRequest(store, "echo", 13_000);
    await store.batch(async () => {
      await store.record(key, update(9_990, "50"), { requestKey: "maker" });
      // Stored before the maker was known to the log's reader: compared with an older version, it looked like a change.
      await store.record(key, update(13_000, "50"), { requestKey: "echo" });
    });
    await store.batch(() => store.record(key, seen(10_000, "50")));
    expect(await rowsOf(store)).toEqual([
      { source: "audit", cls: "no-op", requestKey: "echo", traits: '["e"]' },
      { source: "watch", cls: "unrouted", requestKey: "maker", traits: null },
    ]);
    const fields = await store.database.sql().all<{ n: number }>("SELECT COUNT(*) AS n FROM field_changes");
    // The watched row's one change; the echo's is gone.
    expect(fields).toEqual([{ n: 1 }]);
  });
});
