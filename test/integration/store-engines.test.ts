/**
 * The store's engine contract on both engines, one suite: a real SQLite file and a real PostgreSQL server (Debian's,
 * initdb into a temporary directory). Then what only PostgreSQL has: its schema steps beside SQLite's (read back from
 * each database's own catalogue), replicas opening one database together, and each way opening it fails.
 */
import Database from "better-sqlite3";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DatabaseUnavailableError, openPostgres } from "@/lib/store/engine/open-postgres";
import { POSTGRES_MIGRATIONS } from "@/lib/store/engine/postgres-schema";
import { daysOf, dropBefore, ensurePartitions, listPartitions } from "@/lib/store/engine/partitions";
import { PostgresEngine } from "@/lib/store/engine/postgres";
import type { SqlEngine } from "@/lib/store/engine/types";
import { NoteStore } from "@/lib/store/notes";
import { WriteStore } from "@/lib/store/store";
import { freePort } from "../helpers/processes";
import type { TestPostgres } from "../helpers/postgres";
import { postgresSettings as settings, storeEngines, testPostgres } from "../helpers/store-engines";

let server: TestPostgres;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const listPartitionsOf = (engine: SqlEngine) => listPartitions(engine, "audit_requests");

beforeAll(async () => {
  server = await testPostgres();
}, 60_000);

describe.each(storeEngines())("the engine contract on %s", (_name, store) => {
  let engine: SqlEngine;
  beforeAll(async () => {
    engine = await store.bare();
    await engine.exec("CREATE TABLE t (id BIGINT NOT NULL, tag TEXT NOT NULL, ts_ms BIGINT NOT NULL); CREATE TABLE c (n INTEGER NOT NULL)");
  });
  afterAll(async () => engine?.close());

  it("binds every parameter, and gives 64-bit integers and counts back as numbers", async () => {
    const rows = [
      [1, "a?", 1_764_547_200_000],
      [2, "it's", 1_764_547_200_001],
      [3, "b", 1_764_547_200_002],
    ] as const;
    for (const row of rows) expect(await engine.run("INSERT INTO t (id, tag, ts_ms) VALUES (?, ?, ?)", [...row])).toEqual({ changes: 1 });
    expect(await engine.all("SELECT id, tag, ts_ms FROM t WHERE tag <> '?' ORDER BY id")).toEqual(rows.map(([id, tag, tsMs]) => ({ id, tag, ts_ms: tsMs })));
    expect(await engine.get("SELECT COUNT(*) AS n, SUM(ts_ms) AS total FROM t WHERE id > ?", [1])).toEqual({ n: 2, total: 2 * 1_764_547_200_000 + 3 });
    expect(await engine.get("SELECT id FROM t WHERE tag = ?", ["none"])).toBeUndefined();
    expect(await engine.run("UPDATE t SET tag = ? WHERE id >= ?", ["x", 2])).toEqual({ changes: 2 });
  });

  it("commits a transaction's work when it resolves and keeps none of it when it throws", async () => {
    await engine.transaction(async (tx) => {
      await tx.run("INSERT INTO t (id, tag, ts_ms) VALUES (?, ?, ?)", [10, "kept", 0]);
      await sleep(5);
      await tx.run("INSERT INTO t (id, tag, ts_ms) VALUES (?, ?, ?)", [11, "kept", 0]);
    });
    await expect(
      engine.transaction(async (tx) => {
        await tx.run("INSERT INTO t (id, tag, ts_ms) VALUES (?, ?, ?)", [12, "lost", 0]);
        await sleep(5);
        throw new Error("the work failed");
      }),
    ).rejects.toThrow("the work failed");
    expect(await engine.all("SELECT id FROM t WHERE tag IN ('kept', 'lost') ORDER BY id")).toEqual([{ id: 10 }, { id: 11 }]);
  });

  it("runs transactions asked for together without one seeing another's unfinished work, and statements beside them", async () => {
    const seen = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        engine
          .transaction(async (tx) => {
            await tx.run("INSERT INTO t (id, tag, ts_ms) VALUES (?, ?, ?)", [100 + i, `together-${i % 2}`, i]);
            await sleep(2);
            const mine = await tx.get<{ n: number }>("SELECT COUNT(*) AS n FROM t WHERE id = ?", [100 + i]);
            if (i % 2 === 1) throw new Error("odd ones roll back");
            return mine!.n;
          })
          .catch((error: Error) => error.message),
      ),
    );
    expect(seen).toEqual(Array.from({ length: 20 }, (_, i) => (i % 2 === 0 ? 1 : "odd ones roll back")));
    // Read while a transaction runs: answered with what was committed, not held behind it.
    const during = engine.transaction(async (tx) => {
      await tx.run("INSERT INTO c (n) VALUES (?)", [1]);
      await sleep(20);
    });
    expect(await engine.get("SELECT COUNT(*) AS n FROM c")).toEqual({ n: 0 });
    await during;
    expect(await engine.get("SELECT COUNT(*) AS n FROM c")).toEqual({ n: 1 });
    expect(await engine.get("SELECT COUNT(*) AS n FROM t WHERE tag = 'together-0'")).toEqual({ n: 10 });
    expect(await engine.get("SELECT COUNT(*) AS n FROM t WHERE tag = 'together-1'")).toEqual({ n: 0 });
  });
});

describe("the store on PostgreSQL", () => {
  // Snapshot bundles and the webhook spool are files beside the SQLite files, tables only here.
  it("has every table and column the SQLite files have, by each database's own catalogue", async () => {
    const url = await server.database("schema_check");
    const engine = await openPostgres(settings(url));
    const pgColumns = await engine.all<{ table_name: string; column_name: string }>(
      `SELECT c.table_name, c.column_name FROM information_schema.columns c JOIN pg_class t ON t.relname = c.table_name
       WHERE c.table_schema = 'public' AND c.table_name NOT IN ('schema_migrations', 'snapshot_bundles', 'audit_spool') AND NOT t.relispartition`,
    );
    await engine.close();
    const dir = mkdtempSync(join(tmpdir(), "churnscope-schema-"));
    await (await WriteStore.open(join(dir, "objects.sqlite"))).close();
    await NoteStore.sqlite(join(dir, "notes.sqlite")).close();
    const sqliteColumns: string[] = [];
    for (const file of ["objects.sqlite", "notes.sqlite"]) {
      const db = new Database(join(dir, file), { readonly: true });
      // Roll-ups are a cache each engine's repository makes for itself, not part of the migrated schema.
      const tables = db
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'rank_%' AND name NOT IN ('schema_migrations', 'sqlite_sequence')")
        .all() as { name: string }[];
      for (const { name } of tables)
        for (const column of db.prepare(`PRAGMA table_info(${name})`).all() as { name: string }[]) sqliteColumns.push(`${name}.${column.name}`);
      db.close();
    }
    expect(pgColumns.map((c) => `${c.table_name}.${c.column_name}`).sort()).toEqual(sqliteColumns.sort());
  });

  it("is migrated once when replicas open it together, and open again without a step", async () => {
    const url = await server.database("replicas");
    const opened = await Promise.all(Array.from({ length: 4 }, () => openPostgres(settings(url, { poolSize: 2 }))));
    const steps = await opened[0].all<{ version: number }>("SELECT version FROM schema_migrations ORDER BY version");
    expect(steps.map((s) => s.version)).toEqual(POSTGRES_MIGRATIONS.map((m) => m.version));
    await Promise.all(opened.map((e) => e.close()));
    const again = await openPostgres(settings(url));
    expect(await again.get("SELECT COUNT(*) AS n FROM schema_migrations")).toEqual({ n: POSTGRES_MIGRATIONS.length });
    await again.close();
  });

  it("refuses a database a newer Churnscope migrated, and leaves it as it was", async () => {
    const url = await server.database("newer");
    await (await openPostgres(settings(url))).close();
    const direct = new PostgresEngine(settings(url));
    await direct.run("INSERT INTO schema_migrations (version, description, applied_ms) VALUES (?, ?, ?)", [99, "from a newer Churnscope", 0]);
    await expect(openPostgres(settings(url))).rejects.toThrow(
      new RegExp(`schema version 99, written by a newer Churnscope; this one knows versions up to ${POSTGRES_MIGRATIONS.at(-1)!.version}`),
    );
    expect(await direct.get("SELECT COUNT(*) AS n FROM schema_migrations")).toEqual({ n: POSTGRES_MIGRATIONS.length + 1 });
    await direct.close();
  });

  it("says what is wrong, naming the setting and never the password, when it cannot open", async () => {
    const url = new URL(server.url);
    const withPassword = (password: string) => Object.assign(new URL(url), { password }).toString();
    const failures: [string, string, RegExp][] = [
      ["a wrong password", withPassword("not-the-password"), /refused the password of user churnscope_test: check store\.url/],
      ["no such database", Object.assign(new URL(url), { pathname: "/nowhere" }).toString(), /has no database nowhere: create it/],
      [
        "no server on the port",
        Object.assign(new URL(url), { port: String(await freePort()) }).toString(),
        /refused the connection: is it running, and is store\.url right/,
      ],
      ["TLS asked of a server without it", server.url, /TLS to PostgreSQL at 127\.0\.0\.1:\d+ failed.*store\.tls/],
    ];
    for (const [what, target, said] of failures) {
      const error = await openPostgres(settings(target, what.startsWith("TLS") ? { tls: { mode: "require" } } : {})).then(
        () => new Error(`${what}: opened`),
        (e: Error) => e,
      );
      expect(error, what).toBeInstanceOf(DatabaseUnavailableError);
      expect(error.message, what).toMatch(said);
      expect(error.message, what).not.toContain(server.password);
      expect(error.message, what).not.toContain("not-the-password");
    }
    // A user that may connect but not make tables (PostgreSQL 15 gives CREATE on schema public to its owner only).
    await server.sql("CREATE ROLE reader LOGIN PASSWORD 'reader-pw'");
    await server.database("owned_by_another");
    const reader = Object.assign(new URL(url), { username: "reader", password: "reader-pw", pathname: "/owned_by_another" }).toString();
    await expect(openPostgres(settings(reader))).rejects.toThrow(/user reader may not make the store's tables in owned_by_another.*grant it CREATE/);
  });

  it("stores each day's rows in that day's partition, and retention drops whole days and deletes only the rest", async () => {
    const url = await server.database("partitions");
    const [first, second] = await Promise.all([openPostgres(settings(url)), openPostgres(settings(url))]);
    const day = 86_400_000;
    const base = 20_400 * day;
    const times = [base + 1, base + day - 1, base + day, base + 2 * day + 5, base + 2 * day + 6, base + 3 * day];
    // Two replicas making the same days at once: each waits for the other, neither fails.
    const known = [new Set<string>(), new Set<string>()];
    await Promise.all([first, second].map((e, i) => e.transaction((tx) => ensurePartitions(tx, "audit_requests", daysOf(times), known[i]))));
    await first.transaction(async (tx) => {
      for (const [i, tsMs] of times.entries())
        await tx.run(
          "INSERT INTO audit_requests (request_key, ts_ms, cluster, usr, user_agent, verb, grp, resource, subresource, namespace, name, code) VALUES (?, ?, 'c', 'u', 'ua', 'update', '', 'pods', '', 'ns', 'n', 200)",
          [`req-${i}`, tsMs],
        );
    });
    const where = await first.all<{ partition: string; n: number }>(
      "SELECT tableoid::regclass::text AS partition, COUNT(*) AS n FROM audit_requests GROUP BY 1 ORDER BY 1",
    );
    expect(where).toEqual([
      { partition: "audit_requests_d20400", n: 2 },
      { partition: "audit_requests_d20401", n: 1 },
      { partition: "audit_requests_d20402", n: 2 },
      { partition: "audit_requests_d20403", n: 1 },
    ]);
    // The same request delivered again is the same row.
    await expect(
      first.run(
        "INSERT INTO audit_requests (request_key, ts_ms, cluster, usr, user_agent, verb, grp, resource, subresource, namespace, name, code) VALUES ('req-0', ?, 'c', 'u', 'ua', 'update', '', 'pods', '', 'ns', 'n', 200)",
        [times[0]],
      ),
    ).rejects.toThrow(/duplicate key/);
    // A day no partition holds is refused, not stored somewhere else.
    await expect(
      first.run(
        "INSERT INTO audit_requests (request_key, ts_ms, cluster, usr, user_agent, verb, grp, resource, subresource, namespace, name, code) VALUES ('late', ?, 'c', 'u', 'ua', 'update', '', 'pods', '', 'ns', 'n', 200)",
        [base + 9 * day],
      ),
    ).rejects.toThrow(/no partition/);
    const cutoff = base + 2 * day + 6;
    const removed = await first.transaction((tx) => dropBefore(tx, "audit_requests", cutoff, known[0]));
    expect(removed).toBe(times.filter((t) => t < cutoff).length);
    expect(await listPartitionsOf(first)).toEqual(["audit_requests_d20402", "audit_requests_d20403"]);
    expect((await first.all<{ ts_ms: number }>("SELECT ts_ms FROM audit_requests ORDER BY ts_ms")).map((r) => r.ts_ms)).toEqual(
      times.filter((t) => t >= cutoff),
    );
    await Promise.all([first.close(), second.close()]);
  });

  it("keeps the webhook's spool in a table: bounded across replicas accepting at once, drained in arrival order", async () => {
    const url = await server.database("spool");
    const [a, b] = await Promise.all([
      WriteStore.open({ engine: "postgres", settings: settings(url) }),
      WriteStore.open({ engine: "postgres", settings: settings(url) }),
    ]);
    const batch = (n: number) => Buffer.from(JSON.stringify({ kind: "EventList", items: [], n }));
    const size = batch(0).length;
    // Room for four batches; eight posted at once to two replicas: four taken, four refused, none past the bound.
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => (i % 2 ? a : b).webhookSpool().accept(`c${i % 2}`, batch(i), 4 * size)));
    expect(answers.filter((x) => x.accepted)).toHaveLength(4);
    expect(await a.webhookSpool().queued()).toEqual({ batches: 4, bytes: 4 * size });
    const rows = await b.webhookSpool().oldest(10);
    expect(rows.map((r) => r.id)).toEqual([...rows.map((r) => r.id)].sort((x, y) => x - y));
    for (const row of rows) await a.webhookSpool().remove(row.id);
    expect(await b.webhookSpool().queued()).toEqual({ batches: 0, bytes: 0 });
    // An empty spool takes a batch of any size.
    expect((await a.webhookSpool().accept("c0", Buffer.alloc(10 * size, 32), size)).accepted).toBe(true);
    await Promise.all([a.close(), b.close()]);
  });

  it("keeps a connection for the pages while storing transactions wait their turn", async () => {
    // Two connections, three storing transactions asked for at once: they take turns in this process, so the second
    // does not sit on the other connection waiting for the storing lock, and a page's read is answered meanwhile.
    const store = await WriteStore.open({ engine: "postgres", settings: settings(await server.database("turns"), { poolSize: 2 }) });
    const events: string[] = [];
    let releaseFirst!: () => void;
    const firstHeld = new Promise<void>((resolve) => (releaseFirst = resolve));
    const batches = [1, 2, 3].map((n) =>
      store.batch(async () => {
        events.push(`start ${n}`);
        if (n === 1) await firstHeld;
        await store.setMeta(`batch ${n}`, "stored");
        events.push(`end ${n}`);
      }),
    );
    try {
      while (!events.includes("start 1")) await sleep(10);
      const read = store.getMeta("batch 1");
      const waited = sleep(5_000).then(() => "the read waited for a connection");
      expect(await Promise.race([read, waited])).toBeUndefined();
      events.push("read");
    } finally {
      releaseFirst();
    }
    await Promise.all(batches);
    expect(events).toEqual(["start 1", "read", "end 1", "start 2", "end 2", "start 3", "end 3"]);
    expect(await store.getMeta("batch 3")).toBe("stored");
    await store.close();
  });

  it("fails a transaction whose connection the server ends between two statements, with the reason, and carries on", async () => {
    const engine = await openPostgres(settings(await server.database("ended")));
    // Ended while this process works between statements (no query in flight): the connection's error has no query to
    // go to. Unheard, it would end the process; it must fail the transaction instead.
    const ended = engine.transaction(async (tx) => {
      const { pid } = (await tx.get<{ pid: number }>("SELECT pg_backend_pid() AS pid"))!;
      await server.sql("SELECT pg_terminate_backend($1)", [pid]);
      await new Promise((resolve) => setTimeout(resolve, 500));
      return tx.get("SELECT 1 AS one");
    });
    await expect(ended).rejects.toThrow(/terminat|Connection terminated|not queryable/i);
    expect(await engine.get<{ one: number }>("SELECT 1 AS one")).toEqual({ one: 1 });
    await engine.close();
  });

  it("answers again on its own once the server is back from a crash", async () => {
    const engine = await openPostgres(settings(await server.database("crash")));
    await engine.run("INSERT INTO meta (key, value) VALUES (?, ?)", ["before", "kept"]);
    await server.crashAndRestart();
    // The pool's connections died with the server: the first statement may fail with the reason, later ones succeed.
    let answer: { value: string } | undefined;
    for (let attempt = 0; attempt < 5 && !answer; attempt++)
      answer = await engine.get<{ value: string }>("SELECT value FROM meta WHERE key = ?", ["before"]).catch(() => undefined);
    expect(answer).toEqual({ value: "kept" });
    await engine.close();
  }, 60_000);
});
