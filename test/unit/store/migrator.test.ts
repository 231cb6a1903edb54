/** Versioned migrations on real SQLite files: an older Churnscope's store is brought forward with its rows, a newer one's is refused. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { SchemaTooNewError } from "@/lib/store/migrator";
import { NoteStore } from "@/lib/store/notes";
import { WriteStore } from "@/lib/store/store";

const fresh = (name: string) => join(mkdtempSync(join(tmpdir(), "churnscope-migrate-")), name);

/** The tables as a Churnscope from before bodies, audit requests and notes on snapshots made them. */
function olderStore(path: string): void {
  const db = new Database(path);
  db.exec(`
    CREATE TABLE objects (id INTEGER PRIMARY KEY, cluster TEXT NOT NULL, grp TEXT NOT NULL, kind TEXT NOT NULL, namespace TEXT NOT NULL, name TEXT NOT NULL, UNIQUE (cluster, grp, kind, namespace, name));
    CREATE TABLE writes (id INTEGER PRIMARY KEY, object_id INTEGER NOT NULL REFERENCES objects(id), ts_ms INTEGER NOT NULL, rv TEXT, class TEXT NOT NULL, writer TEXT NOT NULL, source TEXT NOT NULL, heartbeat INTEGER NOT NULL, changes TEXT NOT NULL, projection TEXT NOT NULL);
    CREATE TABLE first_seen (object_id INTEGER PRIMARY KEY REFERENCES objects(id), ts_ms INTEGER NOT NULL, projection TEXT NOT NULL);
    CREATE TABLE audit_latest (object_id INTEGER PRIMARY KEY, rv TEXT NOT NULL, body TEXT NOT NULL);
    INSERT INTO objects VALUES (1, 'milo', 'networking.datumapis.com', 'Connector', 'ns', 'old');
    INSERT INTO writes (object_id, ts_ms, rv, class, writer, source, heartbeat, changes, projection) VALUES (1, 5000, '7', 'unrouted', 'operator', 'watch', 0, '[]', '{}');
    INSERT INTO writes (object_id, ts_ms, rv, class, writer, source, heartbeat, changes, projection) VALUES (1, 6000, '8', 'routed', 'operator', 'audit', 0, '[]', '{}');
    INSERT INTO audit_latest VALUES (1, '8', '{}');
  `);
  db.close();
}

const columns = (path: string, table: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return (db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[]).map((c) => c.name);
  } finally {
    db.close();
  }
};
const versions = (path: string) => {
  const db = new Database(path, { readonly: true });
  try {
    return db.prepare("SELECT version FROM schema_migrations ORDER BY version").all() as { version: number }[];
  } finally {
    db.close();
  }
};

describe("store migrations", () => {
  it("brings an older Churnscope's store forward, keeping its rows, and records the version once", async () => {
    const path = fresh("churnscope.sqlite");
    olderStore(path);
    const store = await WriteStore.open(path);
    const key = { cluster: "milo", group: "networking.datumapis.com", kind: "Connector", namespace: "ns", name: "old" };
    expect((await store.writesOf(key, 0, 10_000, 10)).map((w) => [w.tsMs, w.cls])).toEqual([
      [5000, "unrouted"],
      [6000, "routed"],
    ]);
    // The last audited version gains the time of its object's last audited write.
    expect(await store.audit().latest(key)).toMatchObject({ resourceVersion: "8", tsMs: 6000 });
    await store.close();
    expect(columns(path, "writes")).toEqual(
      expect.arrayContaining(["body", "verb", "subresource", "user_agent", "code", "latency_ms", "request_key", "traits"]),
    );
    expect(columns(path, "audit_requests")).toEqual(expect.arrayContaining(["noop", "precondition", "order_us", "evidence"]));
    expect(columns(path, "audit_bucket_objects")).toEqual(expect.arrayContaining(["source", "object_key", "etag", "outcome"]));
    await (await WriteStore.open(path)).close();
    expect(versions(path)).toEqual([
      { version: 1 },
      { version: 2 },
      { version: 3 },
      { version: 4 },
      { version: 5 },
      { version: 6 },
      { version: 7 },
      { version: 8 },
    ]);
  });

  it("refuses a store a newer Churnscope migrated further, naming the store and both versions, and leaves it as it was", async () => {
    const path = fresh("churnscope.sqlite");
    await (await WriteStore.open(path)).close();
    const db = new Database(path);
    db.prepare("INSERT INTO schema_migrations (version, description, applied_ms) VALUES (99, 'from the future', 0)").run();
    db.close();
    await expect(WriteStore.open(path)).rejects.toThrow(SchemaTooNewError);
    await expect(WriteStore.open(path)).rejects.toThrow(
      /the object store has schema version 99, written by a newer Churnscope; this one knows versions up to 8/,
    );
    expect(versions(path)).toEqual([
      { version: 1 },
      { version: 2 },
      { version: 3 },
      { version: 4 },
      { version: 5 },
      { version: 6 },
      { version: 7 },
      { version: 8 },
      { version: 99 },
    ]);
  });

  it("brings older notes forward as live ones, and refuses notes from a newer Churnscope", async () => {
    const path = fresh("notes.sqlite");
    const db = new Database(path);
    db.exec("CREATE TABLE notes (id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, text TEXT NOT NULL, author TEXT NOT NULL, created_ms INTEGER NOT NULL)");
    db.prepare("INSERT INTO notes (time_ms, text, author, created_ms) VALUES (?, ?, ?, ?)").run(1_000_000_000_000, "rolled back", "ana", 1);
    db.close();
    const notes = NoteStore.sqlite(path);
    expect((await notes.between(0, 2_000_000_000_000)).map((n) => n.text)).toEqual(["rolled back"]);
    expect(await notes.between(0, 2_000_000_000_000, { snapshot: "replay" })).toEqual([]);
    await notes.close();
    const newer = new Database(path);
    newer.prepare("INSERT INTO schema_migrations (version, description, applied_ms) VALUES (2, 'from the future', 0)").run();
    newer.close();
    expect(() => NoteStore.sqlite(path)).toThrow(/the notes store has schema version 2, written by a newer Churnscope/);
  });
});
