/**
 * `npm run store:copy` from a real store into a real PostgreSQL: the replay's object store (104 k writes, as many audit
 * requests and field changes, built by `npm run build`) with notes and a gap added, copied by the command, killed
 * (SIGKILL) partway and run again. Each table's rows are counted on both sides by the test's own queries, a sample of
 * writes is compared column by column, and the target's ids go on after the copied ones.
 */
import Database from "better-sqlite3";
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openPostgres } from "@/lib/store/engine/open-postgres";
import { NoteStore } from "@/lib/store/notes";
import { WriteStore } from "@/lib/store/store";
import { startPostgres, type TestPostgres } from "../helpers/postgres";
import { ROOT } from "../helpers/root";

const REPLAY_STORE = join(ROOT, ".next", "replay-objects.sqlite");
let server: TestPostgres;
const BUNDLE_ID = "0123456789abcdef";
let dataDir = "";

beforeAll(async () => {
  if (!existsSync(REPLAY_STORE)) throw new Error(`${REPLAY_STORE} is missing: run npm run build first (npm test does)`);
  server = await startPostgres();
  dataDir = mkdtempSync(join(tmpdir(), "churnscope-copy-"));
  copyFileSync(REPLAY_STORE, join(dataDir, "churnscope.sqlite"));
  const store = await WriteStore.open(join(dataDir, "churnscope.sqlite"));
  await store.openGap("hub", "connectors", Date.parse("2026-09-11T10:00:00Z"), "the recorder was down");
  await store.closeGap("hub", "connectors", Date.parse("2026-09-11T10:05:00Z"));
  await store.close();
  const notes = NoteStore.sqlite(join(dataDir, "notes.sqlite"));
  for (const [i, text] of ["rolled back infra v0.83.42", "paged network team", "it's not a release?"].entries())
    await notes.add({ timeMs: Date.parse("2026-09-11T14:50:00Z") + i * 60_000, text }, "alice", i === 2 ? { snapshot: "replay" } : { live: true });
  await notes.close();
  // An uploaded snapshot, kept as a file by the one replica: the copy puts it where every replica finds it.
  mkdirSync(join(dataDir, "snapshots"), { recursive: true });
  writeFileSync(join(dataDir, "snapshots", `${BUNDLE_ID}.json.gz`), gzipSync(JSON.stringify({ a: "snapshot" })));
}, 120_000);
afterAll(async () => server?.stop());

/** Runs the command; with `killAfter`, kills it (SIGKILL) once its progress shows that table partly copied. */
function storeCopy(args: string[], env: Record<string, string> = {}, killAfter?: string): Promise<{ code: number | null; output: string }> {
  const child = spawn(process.execPath, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), "lib/cli/store-copy.ts", ...args], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
    // its own process group: tsx runs the command in a child process, which the kill must reach too
    detached: true,
  });
  let output = "";
  const take = (d: Buffer) => {
    output += d;
    const partly = killAfter && [...output.matchAll(new RegExp(`store-copy: ${killAfter} (\\d+)/(\\d+)`, "g"))].some((m) => Number(m[1]) < Number(m[2]));
    if (partly && child.exitCode === null) process.kill(-child.pid!, "SIGKILL");
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  return new Promise((resolve) => child.on("close", (code) => resolve({ code, output })));
}

/** Each table's rows in the SQLite files, read here (the roll-ups' format mark is a cache's, not copied). */
function sourceCounts(): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const file of ["churnscope.sqlite", "notes.sqlite"]) {
    const db = new Database(join(dataDir, file), { readonly: true });
    const tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'rank_%' AND name <> 'schema_migrations'").all() as {
      name: string;
    }[];
    for (const { name } of tables)
      counts[name] = (db.prepare(`SELECT COUNT(*) AS n FROM ${name}${name === "meta" ? " WHERE key <> 'rollup-format'" : ""}`).get() as { n: number }).n;
    db.close();
  }
  return counts;
}

async function targetCounts(tables: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of tables)
    counts[table] = Number((await server.sql(`SELECT COUNT(*) AS n FROM ${table}${table === "meta" ? " WHERE key NOT LIKE 'store-copy:%'" : ""}`)).rows[0].n);
  return counts;
}

describe("npm run store:copy", () => {
  it("copies every row once through a kill partway, with the counts checked at the end", async () => {
    const expected = sourceCounts();
    expect(expected.writes).toBeGreaterThan(100_000);
    expect(expected.notes).toBe(3);
    expect(expected.gaps).toBe(1);
    const env = { CHURNSCOPE_DATABASE_URL: server.url };
    const stopped = await storeCopy(["--from", dataDir, "--chunk-rows", "2000"], env, "writes");
    expect(stopped.code, stopped.output).toBeNull();
    const partial = await targetCounts(Object.keys(expected));
    expect(partial.objects).toBe(expected.objects);
    expect(partial.writes).toBeGreaterThan(0);
    expect(partial.writes).toBeLessThan(expected.writes);
    expect(partial.field_changes).toBe(0);

    const resumed = await storeCopy(["--from", dataDir, "--chunk-rows", "2000"], env);
    expect(resumed.code, resumed.output).toBe(0);
    const copiedAgain = Number(/resumed; (\d+) rows copied/.exec(resumed.output)?.[1]);
    const total = Object.values(expected).reduce((a, b) => a + b, 0);
    const copiedFirst = Object.values(partial).reduce((a, b) => a + b, 0);
    // What the first run committed is not copied again, and everything is there once.
    expect(copiedAgain + copiedFirst).toBe(total);
    expect(await targetCounts(Object.keys(expected))).toEqual(expected);
    expect(resumed.output).not.toMatch(/DIFFERENT/);
    expect(resumed.output).toMatch(/1 of 1 uploaded snapshots in the database/);
    const bundle = (await server.sql("SELECT bundle FROM snapshot_bundles WHERE id = $1", [BUNDLE_ID])).rows[0]?.bundle as Buffer | undefined;
    expect(bundle && JSON.parse(gunzipSync(bundle).toString("utf8"))).toEqual({ a: "snapshot" });
    expect(resumed.output + stopped.output).not.toContain(server.password);
  }, 300_000);

  it("keeps each write's every column, and the target's ids go on after the copied ones", async () => {
    const db = new Database(join(dataDir, "churnscope.sqlite"), { readonly: true });
    const sample = db.prepare("SELECT * FROM writes WHERE id % 2011 = 0 ORDER BY id").all() as Record<string, unknown>[];
    const maxObject = (db.prepare("SELECT MAX(id) AS id FROM objects").get() as { id: number }).id;
    db.close();
    expect(sample.length).toBeGreaterThan(40);
    const copied = (await server.sql(`SELECT * FROM writes WHERE id = ANY($1::bigint[]) ORDER BY id`, [sample.map((w) => w.id)])).rows;
    expect(
      copied.map((row) =>
        Object.fromEntries(Object.entries(row).map(([k, v]) => [k, typeof v === "string" && /^(id|object_id|ts_ms)$/.test(k) ? Number(v) : v])),
      ),
    ).toEqual(sample);
    const made = await server.sql("INSERT INTO objects (cluster, grp, kind, namespace, name) VALUES ('new', '', 'Pod', 'ns', 'made-after') RETURNING id");
    expect(Number(made.rows[0].id)).toBe(maxObject + 1);
  });

  it("refuses a database holding another store, a copy from elsewhere, and a directory without a store", async () => {
    const other = mkdtempSync(join(tmpdir(), "churnscope-copy-other-"));
    copyFileSync(join(dataDir, "churnscope.sqlite"), join(other, "churnscope.sqlite"));
    const elsewhere = await storeCopy(["--from", other], { CHURNSCOPE_DATABASE_URL: server.url });
    expect(elsewhere.code, elsewhere.output).toBe(2);
    expect(elsewhere.output).toMatch(/holds a copy from \S*churnscope-copy-\w+, not \S*churnscope-copy-other-\w+: copy into an empty database/);

    // A store a dashboard wrote into, not a copy: refused before a row is copied.
    const used = await server.database("used");
    const engine = await openPostgres({ url: used, poolSize: 1, tls: { mode: "disable" }, connectTimeoutMs: 5000, statementTimeoutMs: 10_000 });
    await engine.run("INSERT INTO objects (cluster, grp, kind, namespace, name) VALUES ('prod', '', 'Pod', 'ns', 'p')");
    await engine.close();
    const intoUsed = await storeCopy(["--from", other, "--to", used]);
    expect(intoUsed.code, intoUsed.output).toBe(2);
    expect(intoUsed.output).toMatch(/already holds a store \(objects has 1 rows\): copy into an empty database/);

    const none = await storeCopy(["--from", mkdtempSync(join(tmpdir(), "churnscope-copy-none-")), "--to", await server.database("unused")]);
    expect(none.code, none.output).toBe(2);
    expect(none.output).toMatch(/churnscope\.sqlite does not exist: --from takes the data directory/);
    for (const run of [elsewhere, intoUsed, none]) expect(run.output).not.toContain(server.password);
  }, 120_000);
});
