/**
 * The object-write store on both engines, one suite (a real SQLite file, a real PostgreSQL server): ranking, filters,
 * pagination, field churn, one object's writes, the lanes and the roll-ups.
 */
import { describe, expect, it, onTestFinished, vi } from "vitest";
import { buildTimeline, columnOf } from "@/lib/objects/timeline";
import { DayRollups } from "@/lib/store/day-rollups";
import type { WriteStore } from "@/lib/store/store";
import type { ObjectKey, StoredWrite } from "@/lib/wire/objects";
import { storeEngines } from "../../helpers/store-engines";
import { openStoreAt } from "../../helpers/store-at";

const key = (name: string, kind = "Connector"): ObjectKey => ({
  cluster: "milo",
  group: kind === "Lease" ? "coordination.k8s.io" : "networking.datumapis.com",
  kind,
  namespace: "ns",
  name,
});
const write = (tsMs: number, cls: StoredWrite["cls"], writer: string, paths: string[], projection = { online: "false" }): StoredWrite => ({
  tsMs,
  cls,
  writer,
  source: "replay",
  heartbeat: false,
  changes: paths.map((path) => ({ path, before: 1, after: 2 })),
  projection,
});

/** A row count the store's own tables give, read through its engine. */
const countOf = async (store: WriteStore, sql: string) => (await store.database.sql().get<{ n: number }>(sql))!.n;

describe.each(storeEngines())("the store on %s", (_name, engine) => {
  async function fixture(): Promise<WriteStore> {
    const store = await engine.writeStore();
    await store.batch(async () => {
      for (let i = 1; i <= 30; i++) await store.record(key("busy"), write(i * 1000, "unrouted", "operator", ["status.message"]));
      await store.record(key("busy"), write(31_000, "routed", "operator", ["status.ready"], { online: "true" }));
      for (let i = 1; i <= 5; i++) await store.record(key("quiet"), write(i * 1000, "unrouted", "agent", ["status.addresses"]));
      await store.record(key("lease", "Lease"), write(2000, "create", "operator", []));
      await store.record(key("busy"), write(99_000, "unrouted", "operator", ["status.message"]));
    });
    return store;
  }

  describe("WriteStore", () => {
    it("ranks objects by writes in (from, to] with class counts, wasted ratio, top fields, writers and a sparkline", async () => {
      const { total, rows } = await (await fixture()).objects({ fromMs: 0, toMs: 50_000 }, 10, 0);
      expect(total).toBe(3);
      expect(rows.map((r) => r.name)).toEqual(["busy", "quiet", "lease"]);
      expect(rows[0]).toMatchObject({
        writes: 31,
        routed: 1,
        unrouted: 30,
        create: 0,
        topFields: [
          { path: "status.message", changes: 30 },
          { path: "status.ready", changes: 1 },
        ],
        writers: [{ writer: "operator", writes: 31 }],
      });
      expect(rows[0].wastedRatio).toBeCloseTo(30 / 31, 12);
      expect(rows[0].sparkline.reduce((a, b) => a + b, 0)).toBe(31);
      expect(rows[0].sparkline.length).toBe(40);
    });

    it("finds a writer's timer among an object's latest 500 no-ops in the range, with another writer's no-ops between them", async () => {
      const store = await engine.writeStore();
      const T0 = 1_000_000_000;
      // "timer" every 10 s; "other" at uneven gaps; routed writes between; one no-op after the range.
      const planned: { tsMs: number; cls: StoredWrite["cls"]; writer: string }[] = [];
      for (let i = 0; i < 400; i++) planned.push({ tsMs: T0 + i * 10_000, cls: "no-op", writer: "timer" });
      const uneven = [1_000, 5_000, 13_000, 2_000, 21_000];
      for (let i = 0, t = T0 + 3; i < 300; i++) planned.push({ tsMs: (t += uneven[i % uneven.length]), cls: "no-op", writer: "other" });
      for (let i = 0; i < 50; i++) planned.push({ tsMs: T0 + 7 + i * 60_000, cls: "routed", writer: "timer" });
      const toMs = T0 + 4_000_000;
      planned.push({ tsMs: toMs + 5_000, cls: "no-op", writer: "timer" });
      await store.batch(async () => {
        for (const w of planned) await store.record(key("route"), write(w.tsMs, w.cls, w.writer, ["status.conditions"]));
      });
      // The latest 500 no-ops in (T0 - 1, toMs], worked out here: how many of them are the timer's.
      const latest = planned
        .filter((w) => w.cls === "no-op" && w.tsMs <= toMs)
        .sort((x, y) => y.tsMs - x.tsMs)
        .slice(0, 500);
      const timers = latest.filter((w) => w.writer === "timer").length;
      expect(timers).toBeGreaterThan(250);
      expect(timers).toBeLessThan(400);
      const { rows } = await store.objects({ fromMs: T0 - 1, toMs }, 10, 0);
      expect(rows[0].periodicNoop).toEqual({ everySeconds: 10, writes: timers, writer: "timer" });
    });

    it("stores writes in the store's own transactions; on PostgreSQL, refuses one that did not begin with the roll-ups' lock", async () => {
      const store = await engine.writeStore();
      const elsewhere = store.database.transaction(() => store.record(key("a"), write(1000, "unrouted", "operator", ["status.message"])));
      if (store.database.engine.sharedByReplicas) await expect(elsewhere).rejects.toThrow(/must begin with the roll-ups' lock/);
      else await elsewhere;
      await store.batch(() => store.record(key("a"), write(2000, "unrouted", "operator", ["status.message"])));
      expect(await countOf(store, "SELECT COUNT(*) AS n FROM writes")).toBe(store.database.engine.sharedByReplicas ? 1 : 2);
    });

    it("gives each write its own id while two stores on one database take turns, and a transaction's next statement sees its rows", async () => {
      // Two processes storing into one file or database (the dashboard and `npm run recorder`), a burst each in turn.
      const place = await engine.place();
      const [first, second] = [await openStoreAt(place), await openStoreAt(place)];
      onTestFinished(() => Promise.all([first.close(), second.close()]).then(() => undefined));
      const given: { id: number; tsMs: number }[] = [];
      for (let turn = 0; turn < 4; turn++) {
        const store = turn % 2 === 0 ? first : second;
        const seen = await store.batch(async () => {
          for (let i = 0; i < 3; i++) {
            const tsMs = 1000 + turn * 10 + i;
            const { id } = (await store.record(key(`o${turn}`), write(tsMs, "unrouted", "operator", ["status.message"]))) as { id: number };
            given.push({ id, tsMs });
          }
          return countOf(store, "SELECT COUNT(*) AS n FROM writes");
        });
        expect(seen).toBe(given.length);
      }
      const rows = await first.database.sql().all<{ id: number; tsMs: number }>(`SELECT id, ts_ms AS "tsMs" FROM writes ORDER BY ts_ms`);
      expect(rows.map((row) => ({ id: Number(row.id), tsMs: Number(row.tsMs) }))).toEqual(given);
      expect(new Set(given.map((row) => row.id)).size).toBe(12);
    });

    it("stores a burst's rows as given, whatever their text holds", async () => {
      const store = await engine.writeStore();
      const texts = ['he said "hi", {a,b}', 'back\\slash \\"', "NULL", "", "ünï 💥", "line\nbreak\ttab", "{}", "a,b", "sep\u2028del\u007f"];
      await store.batch(async () => {
        for (const [i, text] of texts.entries()) {
          await store.record(key(`o${i}`), { ...write(1000 + i, "create", text, [text, `${text}.x`]), resourceVersion: text, body: { text } });
          await store.setLatest(key(`o${i}`), text, text);
          await store.setMeta(`m${i}`, text);
        }
      });
      const sql = store.database.sql();
      const written = await sql.all<{ writer: string; rv: string; body: string; name: string }>(
        "SELECT w.writer, w.rv, w.body, o.name FROM writes w JOIN objects o ON o.id = w.object_id ORDER BY w.ts_ms",
      );
      expect(written.map((w) => [w.writer, w.rv, JSON.parse(w.body)])).toEqual(texts.map((t) => [t, t, { text: t }]));
      const paths = await sql.all<{ path: string }>("SELECT path FROM field_changes ORDER BY ts_ms, path");
      expect(paths.map((p) => p.path)).toEqual(texts.flatMap((t) => [t, `${t}.x`].sort()));
      for (const [i, text] of texts.entries()) {
        expect(await store.getMeta(`m${i}`)).toBe(text);
        expect(await store.latest(key(`o${i}`))).toEqual({ resourceVersion: text, body: text });
      }
    });

    it("stores rows asked for by two statements into one table in one transaction, in the order asked", async () => {
      const store = await engine.writeStore();
      const head = "INSERT INTO meta (key, value)";
      await store.batch(async () => {
        await store.database.insertRow(head, ["rows/a", "1"]);
        await store.database.insertRow(head, ["rows/b", "2"]);
        // On PostgreSQL these wait as a second group of the same table: in one statement with the first, it would not
        // see the row it conflicts with.
        await store.database.insertRow(head, ["rows/a", "3"], " ON CONFLICT (key) DO UPDATE SET value = excluded.value");
      });
      expect([await store.getMeta("rows/a"), await store.getMeta("rows/b")]).toEqual(["3", "2"]);
    });

    it("keeps the last of a setting set twice in one transaction, and reads it back inside it and after", async () => {
      const store = await engine.writeStore();
      const seen = await store.batch(async () => {
        await store.setMeta("resume/a", "1");
        await store.setMeta("observed/a", "10");
        await store.setMeta("resume/a", "2");
        const inside = await store.getMeta("resume/a");
        await store.setMeta("resume/a", "3");
        return inside;
      });
      expect(seen).toBe("2");
      expect(await store.database.sql().all("SELECT key, value FROM meta WHERE key LIKE '%/a' ORDER BY key")).toEqual([
        { key: "observed/a", value: "10" },
        { key: "resume/a", value: "3" },
      ]);
    });

    it("sorts by any count or by name; hiding heartbeats leaves heartbeat-only objects out (counted) and ranks by the other writes", async () => {
      const store = await fixture();
      await store.batch(async () => {
        for (let i = 1; i <= 40; i++)
          await store.record(key("renewed", "Lease"), { ...write(i * 1000, "unrouted", "kubelet", ["spec.renewTime"]), heartbeat: true });
        for (let i = 1; i <= 50; i++)
          await store.record(key("flapping", "Lease"), { ...write(i * 900, "unrouted", "kubelet", ["spec.renewTime"]), heartbeat: true });
        for (let i = 1; i <= 3; i++) await store.record(key("flapping", "Lease"), write(i * 900 + 1, "unrouted", "agent", ["spec.acquireTime"]));
      });
      const range = { fromMs: 0, toMs: 50_000 };
      const names = async (options: Parameters<WriteStore["objects"]>[3]) => (await store.objects(range, 10, 0, options)).rows.map((r) => r.name);
      expect(await names({})).toEqual(["flapping", "renewed", "busy", "quiet", "lease"]);
      expect(await names({ sort: "routed" })).toEqual(["busy", "flapping", "renewed", "quiet", "lease"]);
      expect((await names({ sort: "create" }))[0]).toBe("lease");
      expect(await names({ sort: "name" })).toEqual(["busy", "flapping", "lease", "quiet", "renewed"]);
      // Wasted: (no-op + unrouted) ÷ writes: flapping, renewed and quiet 100 % (most writes first), busy 30 of 31, lease 0.
      expect(await names({ sort: "wasted" })).toEqual(["flapping", "renewed", "quiet", "busy", "lease"]);
      // Heartbeats hidden: renewed is gone (counted), flapping ranks by its 3 other writes.
      const hidden = await store.objects(range, 10, 0, { hideHeartbeats: true });
      expect(hidden.rows.map((r) => r.name)).toEqual(["busy", "quiet", "flapping", "lease"]);
      expect([hidden.total, hidden.heartbeatOnly]).toEqual([4, { objects: 1, writes: 40 }]);
      expect(hidden.rows.find((r) => r.name === "flapping")).toMatchObject({ writes: 53, heartbeat: 50 });
    });

    it("orders equal counts by namespace and name on every page, where a page's edge cuts through them", async () => {
      const store = await engine.writeStore();
      // Written in an order unlike the names': one object of 3 writes, six of 2 (in two namespaces), one of 1.
      const counts: [string, string, number][] = [
        ["ns", "top", 3],
        ["b", "tie-e", 2],
        ["a", "tie-c", 2],
        ["b", "tie-a", 2],
        ["a", "tie-f", 2],
        ["a", "tie-b", 2],
        ["b", "tie-d", 2],
        ["ns", "last", 1],
      ];
      await store.batch(async () => {
        for (const [namespace, name, n] of counts)
          for (let i = 1; i <= n; i++) await store.record({ ...key(name), namespace }, write(i * 1000, "unrouted", "operator", ["status.message"]));
      });
      const expected = [...counts].sort((x, y) => y[2] - x[2] || x[0].localeCompare(y[0]) || x[1].localeCompare(y[1])).map(([ns, name]) => `${ns}/${name}`);
      for (const pageSize of [1, 2, 3, 5]) {
        const pages: string[] = [];
        for (let offset = 0; offset < counts.length; offset += pageSize)
          pages.push(...(await store.objects({ fromMs: 0, toMs: 10_000 }, pageSize, offset)).rows.map((r) => `${r.namespace}/${r.name}`));
        expect(pages, `pages of ${pageSize}`).toEqual(expected);
      }
    });

    it("filters by kind and class, and pages", async () => {
      const store = await fixture();
      expect((await store.objects({ fromMs: 0, toMs: 50_000, kind: "Lease" }, 10, 0)).rows.map((r) => r.name)).toEqual(["lease"]);
      expect((await store.objects({ fromMs: 0, toMs: 50_000, cls: "routed" }, 10, 0)).rows.map((r) => r.name)).toEqual(["busy"]);
      const page2 = await store.objects({ fromMs: 0, toMs: 50_000 }, 2, 2);
      expect(page2).toMatchObject({ total: 3, rows: [{ name: "lease" }] });
      expect(await store.kinds()).toEqual([
        { cluster: "milo", group: "coordination.k8s.io", kind: "Lease" },
        { cluster: "milo", group: "networking.datumapis.com", kind: "Connector" },
      ]);
    });

    it("ranks changed fields across objects with their writers", async () => {
      const fields = await (await fixture()).fields({ fromMs: 0, toMs: 50_000 }, 10);
      expect(fields.map(({ sparkline: _, ...row }) => row)).toEqual([
        { path: "status.message", changes: 30, objects: 1, routed: 0, unrouted: 30, writers: [{ writer: "operator", changes: 30 }] },
        { path: "status.addresses", changes: 5, objects: 1, routed: 0, unrouted: 5, writers: [{ writer: "agent", changes: 5 }] },
        { path: "status.ready", changes: 1, objects: 1, routed: 1, unrouted: 0, writers: [{ writer: "operator", changes: 1 }] },
      ]);
      // Changes over time: 40 slices of 1.25 s, each (start, end]; the routed change at 31 s is in slice 24, the
      // addresses at 1 … 5 s in slices 0, 1, 2 and (4 s and 5 s both) 3.
      const slices = (path: string) => fields.find((f) => f.path === path)!.sparkline;
      expect(
        slices("status.ready")
          .map((n, i) => [i, n])
          .filter(([, n]) => n > 0),
      ).toEqual([[24, 1]]);
      expect(slices("status.addresses").slice(0, 5)).toEqual([1, 1, 1, 2, 0]);
      expect(slices("status.addresses").reduce((a, b) => a + b, 0)).toBe(5);
      expect(slices("status.message").reduce((a, b) => a + b, 0)).toBe(30);
    });

    it("returns one object's writes in order and the projection in force before a range", async () => {
      const store = await fixture();
      const writes = await store.writesOf(key("busy"), 29_000, 40_000, 100);
      expect(writes.map((w) => [w.tsMs, w.cls])).toEqual([
        [30_000, "unrouted"],
        [31_000, "routed"],
      ]);
      expect(writes[1].changes).toEqual([{ path: "status.ready", before: 1, after: 2 }]);
      expect(await store.projectionBefore(key("busy"), 50_000)).toEqual({ online: "true" });
      expect(await store.projectionBefore(key("busy"), 500)).toBeUndefined();
      expect(await store.writesOf(key("missing"), 0, 1e9, 10)).toEqual([]);
    });
  });

  describe("lanes", () => {
    it("draws each object's projection changes and routed writes per column from what was written, quiet and unknown objects too", async () => {
      const store = await engine.writeStore();
      const [fromMs, toMs, columns] = [10_000, 110_000, 20];
      // Each object's writes, as planned here: classes that can and cannot move the projection, flips, repeats, two in one column.
      const planned = new Map<string, StoredWrite[]>();
      for (let o = 0; o < 6; o++) {
        const writes: StoredWrite[] = [];
        let online = "false";
        for (let i = 0; i < 40; i++) {
          const tsMs = 5_000 + o * 97 + i * 2_900;
          const cls = (["routed", "unrouted", "no-op", "routed", "create", "unknown"] as const)[(i + o) % 6];
          // a write that cannot move the projection carries the one it had; a routed one flips it, except every seventh
          if (cls === "routed" && i % 7 !== 0) online = online === "true" ? "false" : "true";
          writes.push(write(tsMs, cls, "operator", ["status.x"], { online }));
        }
        planned.set(`o${o}`, writes);
      }
      await store.batch(async () => {
        for (const [name, writes] of planned) for (const w of writes) await store.record(key(name), w);
        await store.recordFirstSeen(key("listed"), 1_000, { online: "true" });
      });
      const names = [...planned.keys(), "listed", "never-seen"];
      const lanes = await store.lanes(
        names.map((n) => key(n)),
        fromMs,
        toMs,
        columns,
      );
      const range = { startMs: fromMs, endMs: toMs };
      names.forEach((name, i) => {
        const writes = (planned.get(name) ?? []).filter((w) => w.cls !== "unrouted" && w.cls !== "no-op");
        const inRange = writes.filter((w) => w.tsMs > fromMs && w.tsMs <= toMs);
        // Routed writes per column, counted here from the plan.
        const transitions = new Map<number, number>();
        for (const w of inRange.filter((w) => w.cls === "routed"))
          transitions.set(columnOf(w.tsMs, range, columns), (transitions.get(columnOf(w.tsMs, range, columns)) ?? 0) + 1);
        expect(lanes[i].transitions, name).toEqual([...transitions.entries()]);
        // The projection the range began with, and each write in it whose projection differs from the one before it.
        // (every write carries the projection it left, a write that cannot move it too)
        const initial = name === "listed" ? { online: "true" } : (planned.get(name) ?? []).filter((w) => w.tsMs <= fromMs).at(-1)?.projection;
        let before = initial === undefined ? undefined : JSON.stringify(initial);
        const changes = inRange.flatMap((w) => {
          const text = JSON.stringify(w.projection);
          const changed = text !== before;
          before = text;
          return changed ? [{ tsMs: w.tsMs, projection: text }] : [];
        });
        const expected = buildTimeline({ counts: [], lanes: [], changes, initial: initial && JSON.stringify(initial) }, range, columns).segments;
        expect(lanes[i].segments, name).toEqual(expected);
      });
      expect(lanes.slice(0, 6).every((l) => l.segments.length > 3 && l.transitions.length > 3)).toBe(true);
    });
  });

  describe("daily rollups in the Objects ranking", () => {
    const DAY = 86_400_000;
    const HOUR = 3_600_000;
    const D0 = Date.UTC(2026, 8, 1); // long over, so its days are rolled up when a ranking needs them
    const classes: StoredWrite["cls"][] = ["unrouted", "routed", "no-op", "create", "unknown"];
    // Deterministic writes over 6 days, some exactly on day boundaries (day k holds (k·24 h, (k+1)·24 h]).
    const planned = Array.from({ length: 3_000 }, (_, i) => ({
      name: `o${(i * 7) % 23}`,
      kind: i % 4 === 0 ? "Lease" : "Connector",
      tsMs: i % 97 === 0 ? D0 + (i % 6) * DAY : D0 + ((i * 7_919_113) % (6 * DAY)),
      cls: classes[i % classes.length],
      heartbeat: i % 11 === 0,
      writer: `w${i % 3}`,
      path: `status.p${i % 4}`,
    }));

    async function build() {
      const store = await engine.writeStore();
      await store.batch(async () => {
        for (const w of planned) await store.record(key(w.name, w.kind), { ...write(w.tsMs, w.cls, w.writer, [w.path]), heartbeat: w.heartbeat });
      });
      return store;
    }

    /** The ranking's numbers computed here from the plan, not from the store. */
    function expected(fromMs: number, toMs: number, kind?: string) {
      type Row = {
        writes: number;
        routed: number;
        noop: number;
        unknown: number;
        heartbeat: number;
        writers: Record<string, number>;
        fields: Record<string, number>;
        spark: number[];
      };
      const byObject = new Map<string, Row>();
      for (const w of planned) {
        if (w.tsMs <= fromMs || w.tsMs > toMs || (kind && w.kind !== kind)) continue;
        const row: Row = byObject.get(`${w.kind}/${w.name}`) ?? {
          writes: 0,
          routed: 0,
          noop: 0,
          unknown: 0,
          heartbeat: 0,
          writers: {},
          fields: {},
          spark: new Array<number>(40).fill(0),
        };
        row.writes++;
        row.writers[w.writer] = (row.writers[w.writer] ?? 0) + 1;
        row.fields[w.path] = (row.fields[w.path] ?? 0) + 1;
        row.spark[Math.min(39, Math.floor(((w.tsMs - fromMs - 1) * 40) / (toMs - fromMs)))]++;
        if (w.cls === "routed") row.routed++;
        if (w.cls === "no-op") row.noop++;
        if (w.cls === "unknown") row.unknown++;
        if (w.heartbeat) row.heartbeat++;
        byObject.set(`${w.kind}/${w.name}`, row);
      }
      return byObject;
    }

    /** `exactSpark`: the range's sparkline buckets fall on hour boundaries, where rolled-up hours are exact. */
    async function check(store: WriteStore, fromMs: number, toMs: number, kind?: string, exactSpark = false) {
      const { total, rows } = await store.objects({ fromMs, toMs, kind }, 100, 0);
      const truth = expected(fromMs, toMs, kind);
      expect(total).toBe(truth.size);
      for (const r of rows) {
        const t = truth.get(`${r.kind}/${r.name}`)!;
        expect({ writes: r.writes, routed: r.routed, noop: r.noop, unknown: r.unknown, heartbeat: r.heartbeat }, `${r.kind}/${r.name}`).toEqual({
          writes: t.writes,
          routed: t.routed,
          noop: t.noop,
          unknown: t.unknown,
          heartbeat: t.heartbeat,
        });
        expect(Object.fromEntries(r.writers.map((w) => [w.writer, w.writes]))).toEqual(t.writers);
        const top = Object.entries(t.fields)
          .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
          .slice(0, 3);
        expect(r.topFields.map((f) => [f.path, f.changes])).toEqual(top);
        expect(r.sparkline.reduce((a, b) => a + b, 0)).toBe(t.writes);
        if (exactSpark) expect(r.sparkline).toEqual(t.spark);
      }
    }

    it("answers exactly what the writes say, before, while and after days are rolled up, for aligned and unaligned ranges, with filters", async () => {
      const store = await build();
      const rolled = () => countOf(store, "SELECT COUNT(*) AS n FROM rank_days_done");
      // Quarter hours: 120 are a day and 6 hours, 168 more make 3 days.
      const slices = { "none rolled up": 0, "the latest day and 6 hours of the next": 120, "the latest 3 days": 168, "all rolled up": Infinity };
      const days = { "none rolled up": 0, "the latest day and 6 hours of the next": 1, "the latest 3 days": 3, "all rolled up": 7 };
      for (const stage of Object.keys(slices) as (keyof typeof slices)[]) {
        await store.rollPending(D0 + 30 * DAY, slices[stage]);
        expect(await rolled(), stage).toBe(days[stage]);
        await check(store, D0, D0 + 5 * DAY, undefined, true); // 120 h in 40 buckets of 3 h
        await check(store, D0, D0 + 6 * DAY);
        await check(store, D0 - 5, D0 + 6 * DAY + 5);
        await check(store, D0 + 3_600_000, D0 + 4 * DAY + 7_200_000);
        await check(store, D0 + DAY, D0 + 2 * DAY, "Lease");
        await check(store, D0 + 1_000, D0 + 2_000); // inside one day
        await check(store, D0 + 5 * HOUR + 1_017_000, D0 + 4 * DAY + 3 * HOUR + 5_000); // edges inside hours
        await check(store, D0 + 2 * DAY + HOUR + 7, D0 + 2 * DAY + 23 * HOUR - 9); // most of one day, less both ends
        await check(store, D0 + 20 * HOUR, D0 + DAY + 2 * HOUR + 1); // a few hours either side of midnight
      }
    });

    it("reads whole days, and an edge day as the day less its hours outside or as its hours inside, from the rollups; only part hours from the writes", async () => {
      const store = await build();
      await store.rollPending(D0 + 30 * DAY);
      const day0 = D0 / DAY;
      const plan = await (await DayRollups.open(store.database)).plan(D0 + 5 * HOUR + 17, D0 + 4 * DAY + 3 * HOUR + 5, D0 + 30 * DAY);
      // The first day is mostly inside: the day less its first 6 hours, plus the part of hour 5 inside.
      expect(plan).toEqual({
        rolled: [[day0, day0 + 3]],
        hours: [[(day0 + 4) * 24, (day0 + 4) * 24 + 2]],
        minusHours: [[day0 * 24, day0 * 24 + 5]],
        raw: [
          [D0 + 5 * HOUR + 17, D0 + 6 * HOUR],
          [D0 + 4 * DAY + 3 * HOUR, D0 + 4 * DAY + 3 * HOUR + 5],
        ],
        wholeHours: [[day0 * 24 + 6, (day0 + 4) * 24 + 2]],
        // Day 0 (odd) alone, days 1-2 as their two-day span, day 3 alone (its four-day span would reach past the range);
        // hours 0-2 of day 4 as hours 0-1 and hour 2; day 0's first six hours, subtracted, as hours 0-3 and 4-5.
        counts: [
          { hours: 24, first: day0 * 24, last: day0 * 24 + 23, sign: 1 },
          { hours: 48, first: (day0 + 1) * 24, last: (day0 + 3) * 24 - 1, sign: 1 },
          { hours: 24, first: (day0 + 3) * 24, last: (day0 + 4) * 24 - 1, sign: 1 },
          { hours: 2, first: (day0 + 4) * 24, last: (day0 + 4) * 24 + 1, sign: 1 },
          { hours: 1, first: (day0 + 4) * 24 + 2, last: (day0 + 4) * 24 + 2, sign: 1 },
          { hours: 4, first: day0 * 24, last: day0 * 24 + 3, sign: -1 },
          { hours: 2, first: day0 * 24 + 4, last: day0 * 24 + 5, sign: -1 },
        ],
      });
      expect(day0 % 2, "the first day is odd, so it is alone").toBe(1);
      // A day rolled up in part: its first hours from the rollups, the rest from the writes.
      await store.record(key("o1", "Connector"), write(D0 + 2 * DAY + 5, "routed", "late", ["status.late"]));
      await store.rollPending(D0 + 30 * DAY, 4 * 4 + 2); // 4 hours and half of the fifth, which is read from the writes
      const partDay = [(day0 + 2) * 24, (day0 + 2) * 24 + 3];
      expect(await (await DayRollups.open(store.database)).plan(D0 + 2 * DAY, D0 + 3 * DAY, D0 + 30 * DAY)).toEqual({
        rolled: [],
        hours: [partDay],
        minusHours: [],
        raw: [[D0 + 2 * DAY + 4 * HOUR, D0 + 3 * DAY]],
        wholeHours: [partDay],
        // Hours 0-3 of a day: a four-hour span, built when its last hour was rolled up.
        counts: [{ hours: 4, first: partDay[0], last: partDay[1], sign: 1 }],
      });
    });

    it("a write into a rolled-up day drops its rollup, and the ranking counts the write", async () => {
      const store = await build();
      await store.rollPending(D0 + 30 * DAY);
      // Days day0 - 1 … day0 + 5 have writes (a write at D0 exactly is day0 - 1's), so all seven are rolled up.
      const day0 = D0 / DAY;
      const spans = async () => {
        const rows = await store.database.sql().all<{ hours: number; first_hour: number }>("SELECT hours, first_hour FROM rank_spans_done");
        const days = rows.filter((r) => r.hours > 24).map((r) => `${r.hours / 24} days from ${r.first_hour / 24 - day0}`);
        const perDay = new Map<number, number>();
        for (const r of rows.filter((r) => r.hours <= 24)) {
          const day = Math.floor(r.first_hour / 24) - day0;
          perDay.set(day, (perDay.get(day) ?? 0) + 1);
        }
        return { days: days.sort(), perDay: [...perDay].sort((a, b) => a[0] - b[0]) };
      };
      // Each day: twelve two-hour spans, six of four hours, three of eight and the day. Spans of days are aligned to
      // their length from day 0 of 1970: day0 - 1 (20,696) starts spans of 2, 4 and 8 days, and 8 is not all rolled up.
      expect(day0 - 1).toBe(20_696);
      const whole = [-1, 0, 1, 2, 3, 4, 5].map((d) => [d, 22]);
      expect(await spans()).toEqual({ days: ["2 days from -1", "2 days from 1", "2 days from 3", "4 days from -1"], perDay: whole });
      const late = { name: "o1", kind: "Connector", tsMs: D0 + 2 * DAY + 123, cls: "no-op" as const, heartbeat: false, writer: "late", path: "status.late" };
      // In a storing transaction given its time, as the recorder stores a burst.
      await store.batch(() => store.record(key(late.name, late.kind), write(late.tsMs, late.cls, late.writer, [late.path])), [late.tsMs]);
      // Day 2 is dropped, and with it every span that holds it.
      expect(await spans()).toEqual({ days: ["2 days from -1", "2 days from 3"], perDay: whole.filter(([d]) => d !== 2) });
      planned.push(late);
      try {
        await check(store, D0, D0 + 6 * DAY);
        await check(store, D0 - DAY, D0 + 7 * DAY);
        await store.rollPending(D0 + 30 * DAY);
        expect(await spans()).toEqual({ days: ["2 days from -1", "2 days from 1", "2 days from 3", "4 days from -1"], perDay: whole });
        await check(store, D0 - DAY, D0 + 7 * DAY);
        await check(store, D0 + 3 * HOUR, D0 + 5 * DAY + 13 * HOUR + 1);
      } finally {
        planned.pop();
      }
    });

    it("a write into a day rolled up only in part drops that part, and the day is rolled up again from the start", async () => {
      const store = await build();
      await store.rollPending(D0 + 30 * DAY, 30 * 4); // the latest day, and the first 6 hours of the day before it
      const partDay = D0 / DAY + 4; // day k holds (k·24 h, (k+1)·24 h]: the plan's last day is D0 / DAY + 5
      expect(await store.database.sql().all("SELECT day, slices FROM rank_days_progress")).toEqual([{ day: partDay, slices: 24 }]);
      const late = {
        name: "o2",
        kind: "Connector",
        tsMs: partDay * DAY + 2 * 3_600_000 + 5,
        cls: "routed" as const,
        heartbeat: false,
        writer: "late",
        path: "status.late",
      };
      // In a storing transaction given its time, as the recorder stores a burst.
      await store.batch(() => store.record(key(late.name, late.kind), write(late.tsMs, late.cls, late.writer, [late.path])), [late.tsMs]);
      expect(await countOf(store, "SELECT COUNT(*) AS n FROM rank_days_progress")).toBe(0);
      planned.push(late);
      try {
        await store.rollPending(D0 + 30 * DAY);
        await check(store, D0, D0 + 6 * DAY);
      } finally {
        planned.pop();
      }
    });

    /** Other work on the event loop, a turn at a time: how many turns it got. */
    function otherWork() {
      let running = true;
      let turns = 0;
      const turn = () => {
        if (!running) return;
        turns++;
        setImmediate(turn);
      };
      setImmediate(turn);
      return {
        turns: () => turns,
        stop: () => {
          running = false;
          return turns;
        },
      };
    }

    it("rolls up as many quarter hours as asked, the latest day first, and no more than are pending", async () => {
      const store = await build();
      expect(await store.rollPending(Date.now(), 20)).toBe(20);
      expect(await store.database.sql().all("SELECT day, slices FROM rank_days_progress")).toEqual([{ day: D0 / DAY + 5, slices: 20 }]);
      expect(await store.rollPending(Date.now())).toBe(7 * 96 - 20);
      await check(store, D0, D0 + 6 * DAY);
    });

    it("keeps the rollups caught up by itself, with pauses between steps, until stopped", async () => {
      const store = await build();
      const other = otherWork();
      const errors: Error[] = [];
      const done = () => countOf(store, "SELECT COUNT(*) AS n FROM rank_days_done");
      const stop = store.keepRolledUp((error) => errors.push(error), { idleMs: 50 });
      // 672 steps, each a transaction: bounds, not a speed check (a loaded machine took past 30 s on PostgreSQL).
      await vi.waitFor(async () => expect(await done()).toBe(7), { timeout: 90_000, interval: 20 });
      // Other work ran between the 672 steps, and the ranking is exact.
      expect(other.turns()).toBeGreaterThan(7 * 96);
      await check(store, D0, D0 + 6 * DAY);
      // Writes two days on: the next look rolls up the day between and theirs.
      planned.push({ name: "o1", kind: "Connector", tsMs: D0 + 8 * DAY + 1, cls: "routed", heartbeat: false, writer: "w0", path: "status.p0" });
      try {
        await store.record(key("o1"), write(D0 + 8 * DAY + 1, "routed", "w0", ["status.p0"]));
        await vi.waitFor(async () => expect(await done()).toBe(9), { timeout: 90_000, interval: 20 });
        await check(store, D0, D0 + 9 * DAY);
        // Stopped, it rolls nothing more.
        stop();
        await store.record(key("o1"), write(D0 + 10 * DAY + 1, "routed", "w0", ["status.p0"]));
        await new Promise((resolve) => setTimeout(resolve, 300));
        expect(await done()).toBe(9);
      } finally {
        planned.pop();
        other.stop();
      }
      expect(errors).toEqual([]);
    }, 200_000);

    it("rolls up today's quarter hours a minute after they end; a late write into one drops the day's rollups, one after them does not", async () => {
      const store = await build();
      const today = D0 / DAY + 3;
      const nowMs = D0 + 3 * DAY + 10 * HOUR + 5 * 60_000; // 10:05: the quarter hour to 10:00 ended 5 minutes ago
      const progress = () => store.database.sql().all("SELECT day, slices FROM rank_days_progress ORDER BY day");
      // At 10:00:30 the quarter hour to 10:00 is not yet a minute over: 39 of today's quarters, to 09:45.
      await store.rollPending(D0 + 3 * DAY + 10 * HOUR + 30_000);
      expect(await progress()).toEqual([{ day: today, slices: 39 }]);
      await store.rollPending(nowMs);
      expect(await progress()).toEqual([{ day: today, slices: 40 }]);
      expect(await (await DayRollups.open(store.database)).plan(D0 + 3 * DAY, nowMs, nowMs)).toEqual({
        rolled: [],
        hours: [[today * 24, today * 24 + 9]],
        minusHours: [],
        raw: [[D0 + 3 * DAY + 10 * HOUR, nowMs]],
        wholeHours: [[today * 24, today * 24 + 9]],
        // Hours 0-9 of today: an eight-hour span and a two-hour one.
        counts: [
          { hours: 8, first: today * 24, last: today * 24 + 7, sign: 1 },
          { hours: 2, first: today * 24 + 8, last: today * 24 + 9, sign: 1 },
        ],
      });
      await check(store, D0 + 3 * DAY, nowMs);

      const after = {
        name: "o3",
        kind: "Connector",
        tsMs: D0 + 3 * DAY + 10 * HOUR + 60_000,
        cls: "routed" as const,
        heartbeat: false,
        writer: "now",
        path: "status.now",
      };
      const late = {
        name: "o4",
        kind: "Lease",
        tsMs: D0 + 3 * DAY + 2 * HOUR + 7,
        cls: "no-op" as const,
        heartbeat: false,
        writer: "late",
        path: "status.late",
      };
      await store.record(key(after.name, after.kind), write(after.tsMs, after.cls, after.writer, [after.path]));
      expect(await progress()).toEqual([{ day: today, slices: 40 }]);
      await store.record(key(late.name, late.kind), write(late.tsMs, late.cls, late.writer, [late.path]));
      expect(await progress()).toEqual([]);
      planned.push(after, late);
      try {
        await check(store, D0 + 3 * DAY, nowMs);
        await store.rollPending(nowMs);
        await check(store, D0 + 3 * DAY, nowMs);
      } finally {
        planned.splice(-2);
      }
    });

    it("retention drops the rollups of pruned days, and rollPending rolls every day that is over", async () => {
      const store = await build();
      await store.rollPending(D0 + 30 * DAY);
      expect(await countOf(store, "SELECT COUNT(*) AS n FROM rank_days_done")).toBe(7);
      await store.prune(D0 + 3 * DAY);
      // No span left that holds a pruned day (day0 + 2 and before: those before D0 + 3 days).
      expect(await countOf(store, `SELECT COUNT(*) AS n FROM rank_spans_done WHERE first_hour < ${(D0 / DAY + 3) * 24}`)).toBe(0);
      expect(await countOf(store, `SELECT COUNT(*) AS n FROM rank_spans WHERE first_hour < ${(D0 / DAY + 3) * 24}`)).toBe(0);
      expect(await countOf(store, "SELECT COUNT(*) AS n FROM rank_spans_done WHERE hours = 24")).toBe(3);
      const kept = planned.filter((w) => w.tsMs >= D0 + 3 * DAY);
      const { total } = await store.objects({ fromMs: D0 - DAY, toMs: D0 + 7 * DAY }, 100, 0);
      expect(total).toBe(new Set(kept.map((w) => `${w.kind}/${w.name}`)).size);
      const writes = (await store.objects({ fromMs: D0 - DAY, toMs: D0 + 7 * DAY }, 100, 0)).rows.reduce((sum, r) => sum + r.writes, 0);
      expect(writes).toBe(kept.length);
    });
  });
});
