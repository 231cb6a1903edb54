/**
 * The Objects ranking benchmark's store: `writes` writes of 20,000 objects over 14 days, each with one changed
 * field, the same rows on either engine (one seeded generator). A routed write says online true or false (so objects
 * flap), and some writes carry traits (echoes, clock-only writes, frozen and restamped clocks) as real controllers'
 * do, both drawn from the write's id so the rows are the same as before they were kept. Rows go in as fast as each engine takes them: on
 * SQLite by prepared inserts, on PostgreSQL by `COPY` through psql; on both, the secondary indexes are dropped
 * first and made again after, so the finished store has the real schema and indexes either way.
 */
import { spawn } from "node:child_process";
import { once } from "node:events";
import type { Writable } from "node:stream";
import Database from "better-sqlite3";
import pg from "pg";
import { createRng } from "@/lib/scenario/rng";
import { partitionDayOf, partitionName, PARTITIONED_TABLES } from "@/lib/store/engine/partitions";

export const OBJECTS = 20_000;
export const DAY_MS = 86_400_000;
export const END_MS = Date.parse("2026-09-13T00:00:00Z");
export const START_MS = END_MS - 14 * DAY_MS;

const CLASSES = ["unrouted", "unrouted", "unrouted", "routed", "no-op"];
const PATHS = ["status.conditions[type=Ready].message", "status.publicKey.addresses", "spec.renewTime", "metadata.annotations"];
const WRITERS = ["network-services-operator", "datum-connect-agent", "kube-controller-manager"];
const CHUNK = 200_000;

interface Write {
  id: number;
  objectId: number;
  tsMs: number;
  klass: string;
  writer: string;
  path: string;
}

/** A routed write's projection: online true or false. */
const projectionOf = (w: Write) => (w.klass === "routed" ? `{"online":"${w.id % 2 ? "true" : "false"}"}` : "{}");
/** A no-op is an echo or a clock restamped; a routed write froze Ready's clock; one unrouted write in ten restamped it. */
function traitsOf(w: Write): string | null {
  if (w.klass === "no-op") return w.id % 3 === 0 ? '["e"]' : w.id % 3 === 1 ? '["=","rReady"]' : null;
  if (w.klass === "routed") return '["fReady"]';
  return w.klass === "unrouted" && w.id % 10 === 0 ? '["rReady"]' : null;
}

const objectRow = (i: number) => [i % 3 ? "milo" : "hub", "networking.datumapis.com", i % 5 ? "Connector" : "Lease", `ns-${i % 40}`, `obj-${i}`] as const;

/** The writes, in time order as the recorder appends them, a chunk at a time. */
function* chunks(writes: number): Generator<Write[]> {
  const rng = createRng(7);
  const times = Float64Array.from({ length: writes }, () => START_MS + Math.floor(rng() * 14 * DAY_MS)).sort();
  for (let done = 0; done < writes; done += CHUNK) {
    const chunk: Write[] = [];
    for (let i = done; i < Math.min(writes, done + CHUNK); i++) {
      // A skewed popularity: a few objects take most writes, as in the incident.
      const objectId = 1 + Math.floor(OBJECTS * rng() ** 3);
      const path = PATHS[Math.floor(rng() * PATHS.length)];
      const writer = WRITERS[Math.floor(rng() * WRITERS.length)];
      chunk.push({ id: i + 1, objectId, tsMs: times[i], klass: CLASSES[Math.floor(rng() * CLASSES.length)], writer, path });
    }
    yield chunk;
  }
}

/** Fills a SQLite store the store's own migrations made. */
export function buildSqlite(path: string, writes: number): void {
  const db = new Database(path);
  db.pragma("journal_mode = WAL");
  db.pragma("synchronous = OFF");
  const indexes = db
    .prepare("SELECT name, sql FROM sqlite_master WHERE type = 'index' AND tbl_name IN ('writes', 'field_changes') AND sql IS NOT NULL")
    .all() as { name: string; sql: string }[];
  for (const index of indexes) db.exec(`DROP INDEX ${index.name}`);
  const object = db.prepare("INSERT INTO objects (cluster, grp, kind, namespace, name) VALUES (?, ?, ?, ?, ?)");
  db.transaction(() => {
    for (let i = 0; i < OBJECTS; i++) object.run(...objectRow(i));
  })();
  const write = db.prepare(
    "INSERT INTO writes (id, object_id, ts_ms, rv, class, writer, source, heartbeat, changes, projection, traits) VALUES (?, ?, ?, NULL, ?, ?, 'watch', ?, '[]', ?, ?)",
  );
  const field = db.prepare("INSERT INTO field_changes (write_id, object_id, ts_ms, path, writer) VALUES (?, ?, ?, ?, ?)");
  for (const chunk of chunks(writes))
    db.transaction(() => {
      for (const w of chunk) {
        write.run(w.id, w.objectId, w.tsMs, w.klass, w.writer, w.path === "spec.renewTime" ? 1 : 0, projectionOf(w), traitsOf(w));
        field.run(w.id, w.objectId, w.tsMs, w.path, w.writer);
      }
    })();
  for (const index of indexes) db.exec(index.sql);
  db.exec("ANALYZE");
  db.close();
}

/** `COPY … FROM STDIN` through psql, fed by `write` until it returns. */
async function copyInto(url: string, copy: string, feed: (out: (line: string) => Promise<void>) => Promise<void>): Promise<void> {
  const psql = spawn("psql", [url, "-q", "-v", "ON_ERROR_STOP=1", "-c", copy], { stdio: ["pipe", "ignore", "pipe"] });
  let stderr = "";
  psql.stderr.on("data", (data: Buffer) => (stderr += data.toString()));
  const exited = once(psql, "exit");
  const stdin: Writable = psql.stdin;
  await feed(async (text) => {
    if (!stdin.write(text)) await once(stdin, "drain");
  });
  stdin.end();
  const [code] = (await exited) as [number | null];
  if (code !== 0) throw new Error(`psql ${copy} failed (${code}): ${stderr.trim()}`);
}

/** Fills a PostgreSQL store the store's own migrations made (its days' partitions too). */
export async function buildPostgres(url: string, writes: number): Promise<void> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    for (const table of PARTITIONED_TABLES)
      for (let day = partitionDayOf(START_MS); day <= partitionDayOf(END_MS); day++)
        await client.query(
          `CREATE TABLE IF NOT EXISTS ${partitionName(table, day)} PARTITION OF ${table} FOR VALUES FROM (${day * DAY_MS}) TO (${(day + 1) * DAY_MS})`,
        );
    const indexes = (
      await client.query<{ name: string; sql: string }>(
        "SELECT indexname AS name, indexdef AS sql FROM pg_indexes WHERE tablename IN ('writes', 'field_changes') AND indexname NOT LIKE '%_pkey'",
      )
    ).rows;
    for (const index of indexes) await client.query(`DROP INDEX ${index.name}`);
    for (let i = 0; i < OBJECTS; i += 1000) {
      const rows = Array.from({ length: Math.min(1000, OBJECTS - i) }, (_, j) => objectRow(i + j));
      await client.query(
        `INSERT INTO objects (cluster, grp, kind, namespace, name) VALUES ${rows.map((_, j) => `($${j * 5 + 1}, $${j * 5 + 2}, $${j * 5 + 3}, $${j * 5 + 4}, $${j * 5 + 5})`).join(", ")}`,
        rows.flat(),
      );
    }
    // Both tables at once, one psql each, from one pass of the generator.
    let fieldLines: (line: string) => Promise<void> = async () => undefined;
    let fieldsReady!: () => void;
    const fieldsOpen = new Promise<void>((resolve) => (fieldsReady = resolve));
    let writesDone!: () => void;
    const allWritten = new Promise<void>((resolve) => (writesDone = resolve));
    const fields = copyInto(url, "COPY field_changes (write_id, object_id, ts_ms, path, writer) FROM STDIN", async (out) => {
      fieldLines = out;
      fieldsReady();
      await allWritten;
    });
    await fieldsOpen;
    await copyInto(url, "COPY writes (id, object_id, ts_ms, class, writer, source, heartbeat, changes, projection, traits) FROM STDIN", async (out) => {
      for (const chunk of chunks(writes)) {
        await out(
          chunk
            .map(
              (w) =>
                `${w.id}\t${w.objectId}\t${w.tsMs}\t${w.klass}\t${w.writer}\twatch\t${w.path === "spec.renewTime" ? 1 : 0}\t[]\t${projectionOf(w)}\t${traitsOf(w) ?? "\\N"}\n`,
            )
            .join(""),
        );
        await fieldLines(chunk.map((w) => `${w.id}\t${w.objectId}\t${w.tsMs}\t${w.path}\t${w.writer}\n`).join(""));
      }
      writesDone();
    });
    await fields;
    await client.query("SET maintenance_work_mem = '1GB'");
    // pg_indexes spells a partitioned table's index `ON ONLY`, which would leave its partitions without one.
    for (const index of indexes) await client.query(index.sql.replace(" ON ONLY ", " ON "));
    await client.query("SELECT setval('writes_id_seq', $1)", [writes]);
    await client.query("VACUUM ANALYZE");
  } finally {
    await client.end();
  }
}
