/** The ingester's core on both store engines (a real SQLite file, a real PostgreSQL server): the HTTPRoute status-patch fix's no-op storm, duplicates, Metadata-only logs, and watch overlap. */
import { describe, expect, it } from "vitest";
import { AuditIngester } from "@/lib/audit/ingest";
import { periodicNoop } from "@/lib/analysis/periodic";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { ProfileRecorder } from "@/lib/recorder/core";
import { queryClients } from "@/lib/store/clients-query";
import type { WriteStore } from "@/lib/store/store";
import { storeEngines } from "../../helpers/store-engines";
import { auditEvent, httpRoute, POLICY_CONTROLLER, preconditionStorm, requestLines, ROUTE_OWNER, seed003 } from "../../helpers/audit-log";

const START = Date.UTC(2026, 10, 29, 9, 0, 0);

/** Each stored request's no-op flag and what it rests on, by request key. */
const noopFlags = async (store: WriteStore) =>
  new Map(
    (
      await store.database.sql().all<{ k: string; noop: number | null; evidence: string | null }>("SELECT request_key AS k, noop, evidence FROM audit_requests")
    ).map((r) => [r.k, r]),
  );

describe.each(storeEngines())("audit ingest into the store on %s", (_name, engine) => {
  async function setup() {
    const store = await engine.writeStore();
    const ingester = new AuditIngester(store, "prod", DEFAULT_PROFILES);
    const feed = async (lines: string[]) => {
      lines.forEach((line, i) => ingester.line(line, i + 1, "test.log"));
      await ingester.flush();
    };
    const byClass = async () =>
      Object.fromEntries(
        (
          (await store.database
            .sql()
            .all("SELECT o.name || ':' || w.class AS k, COUNT(*) AS n FROM writes w JOIN objects o ON o.id = w.object_id GROUP BY k")) as {
            k: string;
            n: number;
          }[]
        ).map((r) => [r.k, r.n]),
      );
    return { store, ingester, feed, byClass };
  }

  describe("AuditIngester", () => {
    it("skips dry runs (answered, never stored) and counts them, but not a write with an empty dryRun", async () => {
      const { store, ingester, feed } = await setup();
      const patch = (uri: string) => {
        const e = auditEvent({
          verb: "patch",
          group: "gateway.networking.k8s.io",
          resource: "httproutes",
          namespace: "default",
          name: "web",
          requestObject: {},
          receivedMs: START,
        });
        return JSON.stringify({ ...e, requestURI: `${e.requestURI}${uri}` });
      };
      await feed([patch("?dryRun=All"), patch("?fieldManager=kubectl&dryRun=All"), patch("?dryRun=")]);
      expect(ingester.counts.dryRuns).toBe(2);
      expect(ingester.counts.requests).toBe(1);
      expect(((await store.database.sql().get("SELECT COUNT(*) AS n FROM audit_requests")) as { n: number }).n).toBe(1);
      expect(ingester.summary()).toContain("2 dry runs not stored one by one");
      // Each dry run still cost the API server a request: counted per client with the write stored one by one.
      const counted = await store.database
        .sql()
        .get<{ n: number }>("SELECT SUM(c.calls) AS n FROM api_calls c JOIN api_names v ON v.id = c.verb_id WHERE v.name = 'patch'");
      expect(Number(counted!.n)).toBe(3);
    });

    it("finds the HTTPRoute status-patch fix's no-op status patches, the real changes among them, and who sent each", async () => {
      const truth = seed003(START, 30);
      const { store, ingester, feed, byClass } = await setup();
      await feed(truth.lines);
      const expected: Record<string, number> = {};
      for (const name of truth.routes) {
        expected[`${name}:no-op`] = truth.noop[name];
        expected[`${name}:unrouted`] = truth.unrouted[name];
        if (truth.routed[name]) expected[`${name}:routed`] = truth.routed[name];
        expected[`${name}:unknown`] = 1; // the first patch seen: nothing to compare with
      }
      expect(await byClass()).toEqual(expected);
      expect(ingester.counts.noop).toBe(Object.values(truth.noop).reduce((a, b) => a + b, 0));
      expect(ingester.counts.notWrites).toBe(truth.reads);
      expect(ingester.counts.notCompleted).toBe(ingester.counts.requests); // one RequestReceived per request
      const users = (await store.database.sql().all("SELECT usr, COUNT(*) AS n FROM audit_requests GROUP BY usr")) as { usr: string; n: number }[];
      expect(Object.fromEntries(users.map((u) => [u.usr, u.n]))).toEqual(truth.requestsByUser);
      // Flux's write is the routed one, by Flux; the no-ops are the policy controller's.
      const writers = await store.database.sql().all("SELECT DISTINCT class, writer FROM writes WHERE class IN ('routed', 'no-op') ORDER BY class");
      expect(writers).toEqual([
        { class: "no-op", writer: POLICY_CONTROLLER },
        { class: "routed", writer: ROUTE_OWNER },
      ]);
      // The Objects ranking flags the timer.
      const { rows } = await store.objects({ fromMs: START - 1, toMs: START + 3_600_000 }, 10, 0);
      expect(rows.map((r) => r.periodicNoop)).toEqual(
        truth.routes.map(() => ({ everySeconds: truth.periodSeconds, writes: expect.any(Number), writer: POLICY_CONTROLLER })),
      );
      expect(rows.find((r) => r.name === "route-0")!.noop).toBe(truth.noop["route-0"]);
    });

    it("classifies every write as in order when batches arrive out of order, as the API server's webhook sends them (concurrently)", async () => {
      const truth = seed003(START, 30);
      const { store, ingester, feed, byClass } = await setup();
      // Batches of four requests (two lines each), every pair of neighbours swapped.
      const batches = Array.from({ length: Math.ceil(truth.lines.length / 8) }, (_, i) => truth.lines.slice(i * 8, i * 8 + 8));
      for (let i = 0; i + 1 < batches.length; i += 2) [batches[i], batches[i + 1]] = [batches[i + 1], batches[i]];
      for (const batch of batches) await feed(batch);
      const expected: Record<string, number> = {};
      for (const name of truth.routes) {
        expected[`${name}:no-op`] = truth.noop[name];
        expected[`${name}:unrouted`] = truth.unrouted[name];
        if (truth.routed[name]) expected[`${name}:routed`] = truth.routed[name];
        expected[`${name}:unknown`] = 1; // the first patch: nothing before it to compare with, whenever it came
      }
      expect(await byClass()).toEqual(expected);
      const noops = Object.values(truth.noop).reduce((a, b) => a + b, 0);
      expect(ingester.counts).toMatchObject({ noop: noops, unknown: truth.routes.length });
      // The requests say the same, and the fields changed are the real changes' fields only.
      expect(((await store.database.sql().get("SELECT COUNT(*) AS n FROM audit_requests WHERE noop = 1")) as { n: number }).n).toBe(noops);
      const changed = (await store.database.sql().get("SELECT COUNT(DISTINCT write_id) AS n FROM field_changes")) as { n: number };
      expect(changed.n).toBe(truth.routes.reduce((n, name) => n + truth.unrouted[name] + (truth.routed[name] ?? 0), 0));
    });

    it("adds nothing when the same log is read again, and counts the duplicates", async () => {
      const truth = seed003(START, 5, 2);
      const { ingester, feed, store } = await setup();
      await feed(truth.lines);
      const before = await store.database.sql().get("SELECT COUNT(*) AS n FROM writes");
      const requests = ingester.counts.requests;
      await feed(truth.lines);
      expect(await store.database.sql().get("SELECT COUNT(*) AS n FROM writes")).toEqual(before);
      expect(ingester.counts.requests).toBe(requests);
      expect(ingester.counts.duplicates).toBe(requests);
    });

    it("stores a request delivered twice in one batch once (a webhook batch that repeats part of itself)", async () => {
      const truth = seed003(START, 30);
      const { store, ingester, feed, byClass } = await setup();
      const completed = (line: string) => (JSON.parse(line) as { stage: string }).stage === "ResponseComplete";
      await feed(truth.lines.flatMap((line) => (completed(line) ? [line, line] : [line])));
      const expected: Record<string, number> = {};
      for (const name of truth.routes) {
        expected[`${name}:no-op`] = truth.noop[name];
        expected[`${name}:unrouted`] = truth.unrouted[name];
        if (truth.routed[name]) expected[`${name}:routed`] = truth.routed[name];
        expected[`${name}:unknown`] = 1;
      }
      expect(await byClass()).toEqual(expected);
      const users = (await store.database.sql().all("SELECT usr, COUNT(*) AS n FROM audit_requests GROUP BY usr")) as { usr: string; n: number }[];
      expect(Object.fromEntries(users.map((u) => [u.usr, u.n]))).toEqual(truth.requestsByUser);
      // Every stored request came twice.
      expect(ingester.counts.duplicates).toBe(Object.values(truth.requestsByUser).reduce((a, b) => a + b, 0));
    });

    it("counts Metadata-level writes per object, user and verb without classifying them", async () => {
      const { feed, byClass, store } = await setup();
      const meta = { resource: "httproutes", group: "gateway.networking.k8s.io", namespace: "apps", name: "m1", level: "Metadata" as const };
      await feed([
        ...requestLines({ ...meta, verb: "create", receivedMs: START, user: "bob" }),
        ...requestLines({ ...meta, verb: "update", receivedMs: START + 1000, user: "bob" }),
        ...requestLines({ ...meta, verb: "patch", subresource: "status", receivedMs: START + 2000, user: "carol" }),
        ...requestLines({ ...meta, verb: "delete", receivedMs: START + 3000, user: "bob" }),
      ]);
      expect(await byClass()).toEqual({ "m1:create": 1, "m1:unknown": 2, "m1:delete": 1 });
      expect(await store.database.sql().all("SELECT writer, verb FROM writes ORDER BY ts_ms")).toEqual([
        { writer: "bob", verb: "create" },
        { writer: "bob", verb: "update" },
        { writer: "carol", verb: "patch" },
        { writer: "bob", verb: "delete" },
      ]);
    });

    it("tells Metadata-level no-op updates from their preconditions, as the simulated API server did them, in any batch order", async () => {
      const storms = [1, 2, 3].map((seed) => preconditionStorm(START, 120, seed, `storm-${seed}`));
      // Each storm's lines in batches of six requests, interleaved across storms, every pair of neighbours swapped.
      const all = storms.flatMap((storm) => storm.lines.map((line, i) => ({ line, at: i })));
      all.sort((a, b) => a.at - b.at);
      const batches = Array.from({ length: Math.ceil(all.length / 12) }, (_, i) => all.slice(i * 12, i * 12 + 12).map((l) => l.line));
      for (let i = 0; i + 1 < batches.length; i += 2) [batches[i], batches[i + 1]] = [batches[i + 1], batches[i]];
      const { store, ingester, feed } = await setup();
      for (const batch of batches) await feed(batch);
      const flags = await noopFlags(store);
      let noop = 0;
      let changed = 0;
      let undecided = 0;
      for (const storm of storms) {
        const succeeded = storm.writes.filter((w) => w.code === 200);
        for (const [i, write] of succeeded.entries()) {
          const next = succeeded[i + 1];
          const flag = flags.get(`${write.auditID}/ResponseComplete`)!;
          if (write.precondition === "" || next === undefined || next.precondition === "") {
            expect(flag, write.auditID).toEqual(expect.objectContaining({ noop: null, evidence: null }));
            undecided++;
          } else {
            expect(flag.noop, write.auditID).toBe(write.changed ? 0 : 1);
            expect(flag.evidence).toBe(write.changed ? "precondition-moved" : "same-precondition");
            if (write.changed) changed++;
            else noop++;
          }
        }
        // A refused update is no write: never classified.
        for (const write of storm.writes.filter((w) => w.code === 409)) expect(flags.get(`${write.auditID}/ResponseComplete`)?.noop).toBeNull();
      }
      expect(noop).toBeGreaterThan(100);
      expect(changed).toBeGreaterThan(30);
      // The object writes say the same: a changed one's fields are not known, so it stays unknown.
      expect(((await store.database.sql().get("SELECT COUNT(*) AS n FROM writes WHERE class = 'no-op'")) as { n: number }).n).toBe(noop);
      expect(ingester.counts.noop).toBe(noop);
      // Clients says the same, and on what each count rests.
      const clients = await queryClients(store.audit(), { startMs: START - 1, endMs: START + 3_600_000 });
      expect(clients.clients.find((c) => c.user === "policy")).toMatchObject({ noop, changed });
      expect(clients.evidence).toEqual(
        [
          { evidence: "same-precondition", noop, changed: 0 },
          { evidence: "precondition-moved", noop: 0, changed },
        ].sort((a, b) => b.noop + b.changed - (a.noop + a.changed)),
      );
      expect(clients.unknown).toBe(undecided);
    });

    it("keeps failed requests and unprofiled kinds for the clients view only", async () => {
      const { feed, ingester, store } = await setup();
      await feed([
        JSON.stringify(
          auditEvent({
            verb: "update",
            resource: "httproutes",
            group: "gateway.networking.k8s.io",
            namespace: "apps",
            name: "r",
            code: 409,
            receivedMs: START,
          }),
        ),
        JSON.stringify(auditEvent({ verb: "update", resource: "configmaps", namespace: "apps", name: "c", receivedMs: START })),
        JSON.stringify(
          auditEvent({ verb: "deletecollection", resource: "httproutes", group: "gateway.networking.k8s.io", namespace: "apps", receivedMs: START }),
        ),
      ]);
      expect(ingester.counts).toMatchObject({ requests: 3, failed: 1, unprofiled: 2, objectWrites: 0 });
      expect(await store.database.sql().get("SELECT COUNT(*) AS n FROM writes")).toEqual({ n: 0 });
    });

    it("matches a write the watch recorder already stored instead of counting it twice", async () => {
      const { store, ingester, feed } = await setup();
      const recorder = new ProfileRecorder(
        store,
        "prod",
        DEFAULT_PROFILES.filter((p) => p.name === "httproute"),
      );
      await recorder.applyList([httpRoute("w", 5, ["a.example.com"], 1)], "5", START);
      await recorder.applyEvent("MODIFIED", httpRoute("w", 6, ["b.example.com"], 1), START + 1_000);
      const audit = { verb: "update", resource: "httproutes", group: "gateway.networking.k8s.io", namespace: "apps", name: "w", user: ROUTE_OWNER };
      await feed([
        JSON.stringify(auditEvent({ ...audit, receivedMs: START - 500, responseObject: httpRoute("w", 5, ["a.example.com"], 1) })),
        JSON.stringify(auditEvent({ ...audit, receivedMs: START + 900, responseObject: httpRoute("w", 6, ["b.example.com"], 1), latencyMs: 33 })),
        JSON.stringify(auditEvent({ ...audit, receivedMs: START + 2_000, responseObject: httpRoute("w", 6, ["b.example.com"], 1) })),
      ]);
      expect(ingester.counts).toMatchObject({ matchedWatch: 1, noop: 1 });
      expect(await store.database.sql().all("SELECT source, class, rv, verb, latency_ms FROM writes ORDER BY ts_ms")).toEqual([
        { source: "audit", class: "unknown", rv: "5", verb: "update", latency_ms: 5 },
        { source: "watch", class: "routed", rv: "6", verb: "update", latency_ms: 33 },
        { source: "audit", class: "no-op", rv: "6", verb: "update", latency_ms: 5 },
      ]);
    });
  });

  describe("one write, one row, whichever of the recorder and the audit log stores it first", () => {
    const audit = { resource: "httproutes", group: "gateway.networking.k8s.io", namespace: "apps", name: "w", user: ROUTE_OWNER, userAgent: "flux/2.3.0" };
    // A routed update (rv 6), an identical update answered with rv 6 again, a patch that only restamps lastTransitionTime (rv 7),
    // and a delete answered with a Status that carries no resourceVersion (the watch says deleted at 8).
    const lines = () => [
      JSON.stringify(
        auditEvent({ ...audit, verb: "update", receivedMs: START + 1_000, latencyMs: 31, responseObject: httpRoute("w", 6, ["b.example.com"], 1) }),
      ),
      JSON.stringify(
        auditEvent({ ...audit, verb: "update", receivedMs: START + 2_000, latencyMs: 32, responseObject: httpRoute("w", 6, ["b.example.com"], 1) }),
      ),
      JSON.stringify(
        auditEvent({ ...audit, verb: "patch", receivedMs: START + 3_000, latencyMs: 33, responseObject: httpRoute("w", 7, ["b.example.com"], 1) }),
      ),
      JSON.stringify(
        auditEvent({
          ...audit,
          verb: "delete",
          receivedMs: START + 4_000,
          latencyMs: 34,
          responseObject: { kind: "Status", apiVersion: "v1", status: "Success", details: { name: "w", kind: "httproutes" } },
        }),
      ),
    ];
    const watch = async (recorder: ProfileRecorder) => {
      await recorder.applyEvent("MODIFIED", httpRoute("w", 6, ["b.example.com"], 1), START + 1_010);
      await recorder.applyEvent("MODIFIED", httpRoute("w", 7, ["b.example.com"], 1), START + 3_010);
      await recorder.applyEvent("DELETED", httpRoute("w", 8, ["b.example.com"], 1), START + 4_010);
    };

    it.each(["watch first", "audit first"])("%s", async (order) => {
      const { store, feed } = await setup();
      const recorder = new ProfileRecorder(
        store,
        "prod",
        DEFAULT_PROFILES.filter((p) => p.name === "httproute"),
      );
      await recorder.applyList([httpRoute("w", 5, ["a.example.com"], 1)], "5", START);
      if (order === "watch first") {
        await watch(recorder);
        await feed(lines());
      } else {
        await feed(lines());
        await watch(recorder);
      }
      const rows = await store.database
        .sql()
        .all<{ changes: string }>(`SELECT class, verb, latency_ms AS "latencyMs", user_agent AS "userAgent", writer, changes FROM writes ORDER BY ts_ms`);
      expect(rows.map(({ changes, ...row }) => ({ ...row, changed: (JSON.parse(changes) as unknown[]).length }))).toEqual([
        // managedFields names no owner of spec.hostnames: the audit's user is the writer.
        { class: "routed", verb: "update", latencyMs: 31, userAgent: "flux/2.3.0", writer: ROUTE_OWNER, changed: 1 },
        { class: "no-op", verb: "update", latencyMs: 32, userAgent: "flux/2.3.0", writer: ROUTE_OWNER, changed: 0 },
        // The field manager whose entry the write touched.
        { class: "no-op", verb: "patch", latencyMs: 33, userAgent: "flux/2.3.0", writer: "envoy-gateway", changed: 0 },
        // A delete names no field manager: the audit's user is its writer.
        { class: "delete", verb: "delete", latencyMs: 34, userAgent: "flux/2.3.0", writer: ROUTE_OWNER, changed: 0 },
      ]);
      // The requests' own no-op flags follow the one row's class, whoever classified it.
      expect(await store.database.sql().all("SELECT verb, noop FROM audit_requests ORDER BY ts_ms")).toEqual([
        { verb: "update", noop: 0 },
        { verb: "update", noop: 1 },
        { verb: "patch", noop: 1 },
        { verb: "delete", noop: null },
      ]);
      expect(await store.database.sql().get("SELECT COUNT(*) AS n FROM field_changes")).toEqual({ n: 1 });
    });
  });

  describe("cluster-scoped objects", () => {
    const namespaceProfile = {
      ...DEFAULT_PROFILES.find((p) => p.name === "httproute")!,
      name: "namespace",
      group: "",
      version: "v1",
      resource: "namespaces",
      kind: "Namespace",
      source: { path: "$.metadata" },
      routed: { labels: { path: "$.labels" } },
    };
    const siteProfile = { ...namespaceProfile, name: "site", group: "net.example.io", resource: "sites", kind: "Site", scope: "Cluster" as const };

    it("keys a Namespace, a ClusterRole and a cluster-scoped custom resource without a namespace, whatever objectRef says", async () => {
      const store = await engine.writeStore();
      const ingester = new AuditIngester(store, "prod", [...DEFAULT_PROFILES, namespaceProfile, siteProfile]);
      const ns = (rv: number, labels: Record<string, string>) => ({
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "openshift-ovn-kubernetes", resourceVersion: String(rv), labels },
      });
      const lines = [
        // The API server names the namespace itself in objectRef.namespace for some verbs and not for others.
        ...requestLines({ verb: "create", resource: "namespaces", name: "openshift-ovn-kubernetes", receivedMs: START, responseObject: ns(1, { a: "1" }) }),
        ...requestLines({
          verb: "update",
          resource: "namespaces",
          namespace: "openshift-ovn-kubernetes",
          name: "openshift-ovn-kubernetes",
          receivedMs: START + 1000,
          responseObject: ns(2, { a: "2" }),
        }),
        ...requestLines({
          verb: "patch",
          resource: "namespaces",
          namespace: "openshift-ovn-kubernetes",
          name: "openshift-ovn-kubernetes",
          receivedMs: START + 2000,
          responseObject: ns(2, { a: "2" }),
        }),
        ...requestLines({
          verb: "update",
          resource: "clusterroles",
          group: "rbac.authorization.k8s.io",
          namespace: "kube-system",
          name: "system:controller:x",
          receivedMs: START + 3000,
        }),
        ...requestLines({
          verb: "patch",
          resource: "sites",
          group: "net.example.io",
          namespace: "stray",
          name: "site-1",
          receivedMs: START + 4000,
          responseObject: { kind: "Site", metadata: { name: "site-1", resourceVersion: "5" } },
        }),
      ];
      lines.forEach((line, i) => ingester.line(line, i + 1, "scope.log"));
      await ingester.flush();
      expect(await store.database.sql().all("SELECT kind, namespace, name FROM objects ORDER BY kind")).toEqual([
        { kind: "Namespace", namespace: "", name: "openshift-ovn-kubernetes" },
        { kind: "Site", namespace: "", name: "site-1" },
      ]);
      // One object, so its writes compare with each other: the update changed a label, the patch changed nothing.
      expect(
        await store.database.sql().all("SELECT w.class FROM writes w JOIN objects o ON o.id = w.object_id WHERE o.kind = 'Namespace' ORDER BY w.ts_ms"),
      ).toEqual([{ class: "create" }, { class: "routed" }, { class: "no-op" }]);
      // The Clients view's requests are keyed the same way.
      expect(await store.database.sql().all("SELECT DISTINCT resource, namespace FROM audit_requests ORDER BY resource")).toEqual([
        { resource: "clusterroles", namespace: "" },
        { resource: "namespaces", namespace: "" },
        { resource: "sites", namespace: "" },
      ]);
    });
  });

  describe("retention", () => {
    it("warns when stored requests are older than the store keeps, and prunes audit requests with the writes", async () => {
      const { ingester, feed, store } = await setup();
      await feed(seed003(START, 2, 1).lines);
      const days = 86_400_000;
      expect(ingester.retentionWarning(14 * days, START + days)).toBeNull();
      expect(ingester.retentionWarning(14 * days, START + 20 * days)).toContain("older than recorder.retentionDays (14)");
      const count = async (table: string) => ((await store.database.sql().get(`SELECT COUNT(*) AS n FROM ${table}`)) as { n: number }).n;
      expect(await count("audit_requests")).toBeGreaterThan(0);
      await store.pruneIfDue(14 * days, START + 20 * days);
      expect([await count("audit_requests"), await count("writes")]).toEqual([0, 0]);
    });
  });

  describe("re-ingesting after retention", () => {
    const days = 86_400_000;
    /** Every object write as the Objects views read it, in order: the figure a prune and re-ingest must not change. */
    const writes = async (store: WriteStore) =>
      await store.database
        .sql()
        .all("SELECT o.name, w.ts_ms, w.class, w.verb, w.rv, w.changes FROM writes w JOIN objects o ON o.id = w.object_id ORDER BY w.ts_ms, o.name");
    const requests = async (store: WriteStore) => await store.database.sql().all("SELECT request_key, noop FROM audit_requests ORDER BY request_key");
    /** One `npm run ingest`: a new ingester on the same store, as a new process has. */
    const run = async (store: WriteStore, lines: string[]) => {
      const ingester = new AuditIngester(store, "prod", DEFAULT_PROFILES);
      lines.forEach((line, i) => ingester.line(line, i + 1, "old.log"));
      await ingester.flush();
      return ingester;
    };

    it("reproduces the first ingest's writes and classes after any prune, in any order of prunes and runs", async () => {
      const truth = seed003(START, 30);
      const { store } = await setup();
      await run(store, truth.lines);
      const first = await writes(store);
      const firstRequests = await requests(store);
      // The log holds real changes (unrouted, routed) among the no-ops: a version chain compared with a later copy would call them no-ops.
      expect(new Set(first.map((w) => (w as { class: string }).class))).toEqual(new Set(["unknown", "no-op", "unrouted", "routed"]));
      const midMs = START + 15 * 60_000;
      for (const beforeMs of [START + days, midMs, START + days, midMs, START + 7 * 60_000]) {
        await store.prune(beforeMs);
        expect((await writes(store)).length).toBeLessThan(first.length);
        await run(store, truth.lines);
        expect(await writes(store)).toEqual(first);
        expect(await requests(store)).toEqual(firstRequests);
      }
      // Read twice without a prune between: all duplicates, nothing changes.
      const again = await run(store, truth.lines);
      expect(again.counts.duplicates).toBe(firstRequests.length);
      expect(await writes(store)).toEqual(first);
    });

    it("in one run, a newer log read before an older one: the newer log's first writes are compared again with the older log's last, while memory keeps them", async () => {
      const inOneRun = async (lines: string[], cut: number) => {
        const { store } = await setup();
        const ingester = new AuditIngester(store, "prod", DEFAULT_PROFILES);
        for (const part of [lines.slice(cut), lines.slice(0, cut)]) {
          part.forEach((line, i) => ingester.line(line, i + 1, "log"));
          await ingester.flush();
        }
        return store;
      };
      const half = (lines: string[]) => lines.length / 2 + ((lines.length / 2) % 2);
      // Two minutes: six patches of each route in the newer half, fewer than memory keeps of an object. As in order.
      const short = seed003(START, 2);
      const inOrder = (await setup()).store;
      await run(inOrder, short.lines);
      const reversed = await inOneRun(short.lines, half(short.lines));
      expect(await writes(reversed)).toEqual(await writes(inOrder));
      expect(await requests(reversed)).toEqual(await requests(inOrder));
      // A route whose 24 patches each change its status (observedGeneration k % 5), so each is a version: the newer half is
      // 12, and memory keeps an object's newest 8. The older half's last cannot reach the newer half's first (forgotten),
      // so that one stays unknown; comparing across the gap would make the oldest one kept a no-op (k % 5 repeats).
      const lines = Array.from({ length: 24 }, (_, k) =>
        requestLines({
          verb: "patch",
          resource: "httproutes",
          group: "gateway.networking.k8s.io",
          namespace: "apps",
          name: "busy",
          subresource: "status",
          receivedMs: START + k * 1000,
          responseObject: httpRoute("busy", 5000 + k, ["busy.example.com"], k % 5),
        }),
      ).flat();
      const classes = async (store: WriteStore) => ((await writes(store)) as { class: string }[]).map((w) => w.class);
      const busyInOrder = (await setup()).store;
      await run(busyInOrder, lines);
      expect(await classes(busyInOrder)).toEqual(["unknown", ...Array(23).fill("unrouted")]);
      expect(await classes(await inOneRun(lines, lines.length / 2))).toEqual([
        "unknown",
        ...Array(11).fill("unrouted"),
        "unknown",
        ...Array(11).fill("unrouted"),
      ]);
    });

    it("never compares a late write with a version memory kept across versions it let go of", async () => {
      const { store } = await setup();
      const ingester = new AuditIngester(store, "prod", DEFAULT_PROFILES);
      const patch = (second: number, rv: number, observed: number) =>
        requestLines({
          verb: "patch",
          resource: "httproutes",
          group: "gateway.networking.k8s.io",
          namespace: "apps",
          name: "late",
          subresource: "status",
          receivedMs: START + second * 1000,
          responseObject: httpRoute("late", rv, ["late.example.com"], observed),
        });
      const feed = async (lines: string[]) => {
        lines.forEach((line, i) => ingester.line(line, i + 1, "log"));
        await ingester.flush();
      };
      // Seventeen versions in order (memory keeps the newest 8), then two late writes from the forgotten stretch, with the
      // same content: compared with each other they would read as a no-op, but versions 4 to 6 lie between them.
      await feed(Array.from({ length: 17 }, (_, k) => patch(k + 1, 100 + k, k % 5)).flat());
      await feed(patch(3.5, 90, 7));
      await feed(patch(6.5, 91, 7));
      const late = await store.database
        .sql()
        .all("SELECT w.ts_ms, w.class FROM writes w JOIN objects o ON o.id = w.object_id WHERE w.ts_ms IN (?, ?) ORDER BY w.ts_ms", [
          START + 3500,
          START + 6500,
        ]);
      expect(late).toEqual([
        { ts_ms: START + 3500, class: "unknown" },
        { ts_ms: START + 6500, class: "unknown" },
      ]);
    });

    it("compares an older log's writes with their own predecessors when a newer log was read first", async () => {
      const truth = seed003(START, 30);
      // The second half of the requests in one log, the first half in another (each request is two lines, so the halves split between requests).
      const cut = truth.lines.length / 2 + ((truth.lines.length / 2) % 2);
      const older = truth.lines.slice(0, cut);
      const newer = truth.lines.slice(cut);
      const inOrder = (await setup()).store;
      await run(inOrder, older);
      await run(inOrder, newer);
      const reversed = (await setup()).store;
      await run(reversed, newer);
      await run(reversed, older);
      const byWrite = async (store: WriteStore) =>
        new Map(((await writes(store)) as { name: string; ts_ms: number; class: string }[]).map((w) => [`${w.name}@${w.ts_ms}`, w.class]));
      const expected = await byWrite(inOrder);
      const got = await byWrite(reversed);
      expect([...got.keys()].sort()).toEqual([...expected.keys()].sort());
      // Only each object's first write in the newer log differs: read first, it had nothing to compare with.
      const differing = [...expected].filter(([k, cls]) => got.get(k) !== cls);
      expect(differing.length).toBeLessThanOrEqual(truth.routes.length);
      for (const [k] of differing) expect(got.get(k)).toBe("unknown");
      // And the newest version stays the newest: a write after both logs is compared with the last one.
      const last = (await inOrder.database.sql().all("SELECT rv, ts_ms FROM audit_latest ORDER BY object_id")) as { rv: string; ts_ms: number }[];
      expect(await reversed.database.sql().all("SELECT rv, ts_ms FROM audit_latest ORDER BY object_id")).toEqual(last);
    });

    it("a run that prunes says how many requests and writes it dropped", async () => {
      const { store, feed, ingester } = await setup();
      await feed(seed003(START, 2, 1).lines);
      const stored = { requests: ingester.counts.requests, writes: ingester.counts.objectWrites };
      const pruned = await store.pruneIfDue(14 * days, START + 20 * days);
      expect(pruned).toEqual({ beforeMs: START + 6 * days, ...stored });
      expect(await store.pruneIfDue(14 * days, START + 20 * days + 1000)).toBeNull(); // not due again within the hour
      const next = new AuditIngester(store, "prod", DEFAULT_PROFILES);
      next.pruned = pruned;
      expect(next.summary()).toContain(
        `pruned ${stored.requests} requests and ${stored.writes} object writes older than ${new Date(START + 6 * days).toISOString()}`,
      );
    });
  });

  describe("periodicNoop", () => {
    const at = (seconds: number[]) => seconds.map((s) => ({ tsMs: s * 1000, writer: "w" }));
    it("flags a timer, tolerating jitter and a missed beat", () => {
      expect(periodicNoop(at([0, 10, 20.4, 30, 39.6, 50, 70, 80]))).toEqual({ everySeconds: 10, writes: 8, writer: "w" });
    });
    it("does not flag irregular writes, bursts, or too few", () => {
      expect(periodicNoop(at([0, 3, 40, 41, 90, 200, 204]))).toBeNull();
      expect(periodicNoop(at([0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6]))).toBeNull();
      expect(periodicNoop(at([0, 10, 20, 30, 40]))).toBeNull();
    });
    it("finds one writer's timer among another writer's no-ops", () => {
      const timerWrites = at([0, 10, 20, 30, 40, 50, 60]).map((w) => ({ ...w, writer: "policy-controller" }));
      const burst = [61, 61.4, 61.8, 62.2].map((s) => ({ tsMs: s * 1000, writer: "labeler" }));
      expect(periodicNoop([...timerWrites, ...burst])).toEqual({ everySeconds: 10, writes: 7, writer: "policy-controller" });
    });
  });

  describe("Metadata level beside the recorder: one write, one row", () => {
    // Updates sent against the version read (no patches: a patch names no version to join by), many of them no-ops.
    const storm = () => preconditionStorm(START, 150, 7, "w", { patchShare: 0 });
    const events = (writes: ReturnType<typeof storm>["writes"]) =>
      writes
        .filter((w) => w.changed)
        .map((w, k) => ({ type: "MODIFIED", obj: httpRoute("w", Number(w.version), ["a.example.com"], k + 2), tsMs: w.receivedMs + 10 }));

    it.each(["watch first", "audit first", "in turns, batches out of order"])("%s", async (order) => {
      const { lines, writes } = storm();
      const { store, feed } = await setup();
      const recorder = new ProfileRecorder(
        store,
        "prod",
        DEFAULT_PROFILES.filter((p) => p.name === "httproute"),
      );
      await recorder.applyList([httpRoute("w", 100, ["a.example.com"], 1)], "100", START - 1_000);
      const watched = events(writes);
      if (order === "watch first") {
        await recorder.applyEvents(watched);
        await feed(lines);
      } else if (order === "audit first") {
        await feed(lines);
        await recorder.applyEvents(watched);
      } else {
        // Ten requests at a time, every pair of batches swapped, each batch's watch events after it.
        const batches = Array.from({ length: Math.ceil(lines.length / 20) }, (_, i) => lines.slice(i * 20, i * 20 + 20));
        for (let i = 0; i + 1 < batches.length; i += 2) [batches[i], batches[i + 1]] = [batches[i + 1], batches[i]];
        let sent = 0;
        for (const batch of batches) {
          await feed(batch);
          const upTo = Math.max(...batch.map((l) => Date.parse(JSON.parse(l).requestReceivedTimestamp)));
          const due = watched.filter((e) => e.tsMs - 10 <= upTo).slice(sent);
          await recorder.applyEvents(due);
          sent += due.length;
        }
        await recorder.applyEvents(watched.slice(sent));
      }
      const succeeded = writes.filter((w) => w.code === 200);
      const rows = (await store.database.sql().all(`SELECT source, verb, request_key AS "requestKey", class FROM writes ORDER BY ts_ms, id`)) as {
        source: string;
        verb: string | null;
        requestKey: string | null;
        class: string;
      }[];
      // One row per write: the create, every update, and no watched version left without the request that made it.
      expect(rows.length).toBe(1 + succeeded.length);
      expect(rows.filter((r) => r.verb === null)).toEqual([]);
      const byKey = new Map(rows.map((r) => [r.requestKey, r]));
      const flags = await noopFlags(store);
      for (const [i, w] of succeeded.entries()) {
        const key = `${w.auditID}/ResponseComplete`;
        const next = succeeded[i + 1];
        if (w.changed) {
          // The version it made, as the watch saw it, is its row.
          expect(byKey.get(key), key).toMatchObject({ source: "watch", verb: "update" });
          expect(flags.get(key), key).toMatchObject({ noop: 0, evidence: "watched-successor" });
        } else if (next) {
          expect(byKey.get(key), key).toMatchObject({ source: "audit", class: "no-op" });
          expect(flags.get(key), key).toMatchObject({ noop: 1, evidence: "same-precondition" });
        } else expect(byKey.get(key), key).toMatchObject({ source: "audit", class: "unknown" });
      }
    });
  });
});
