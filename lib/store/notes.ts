/**
 * Notes people add in the UI ("rolled back infra", "paged network team"): a time, a text and an
 * author, kept in the store's database (a SQLite file of their own under the data directory, or the
 * PostgreSQL database) and drawn as markers on every chart. A note is on the live views or on one
 * snapshot (the replay included), as it was added: a snapshot's data is frozen, its notes are not, and
 * they ride along when it is downloaded again.
 */
import { mkdirSync } from "node:fs";
import { dirname } from "node:path";
import { z } from "zod";
import { badRequest, notFound } from "../api/envelope";
import type { Marker } from "../markers/marker";
import { formatUtc } from "../format/time";
import { SqliteEngine } from "./engine/sqlite";
import type { SqlEngine } from "./engine/types";
import { addMissingColumns, migrate, type Migration } from "./migrator";

export interface Note {
  id: number;
  timeMs: number;
  text: string;
  author: string;
  createdMs: number;
}

/** Where a note belongs: the live views, or one snapshot by its id. */
export type NoteScope = { live: true } | { snapshot: string };
const scopeText = (scope: NoteScope) => ("snapshot" in scope ? `snapshot:${scope.snapshot}` : "");

export const noteInputSchema = z
  .object({
    timeMs: z.number().int().min(946_684_800_000, "expected epoch milliseconds after 2000").max(7_258_118_400_000, "expected epoch milliseconds before 2200"),
    text: z.string().trim().min(1, "a note needs text").max(500, "at most 500 characters"),
  })
  .strict();

const NOTES_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    description: "notes, on the live views or on one snapshot",
    apply(db) {
      db.exec(
        "CREATE TABLE IF NOT EXISTS notes (id INTEGER PRIMARY KEY, time_ms INTEGER NOT NULL, text TEXT NOT NULL, author TEXT NOT NULL, created_ms INTEGER NOT NULL); CREATE INDEX IF NOT EXISTS notes_time ON notes (time_ms);",
      );
      // Stores from before notes on snapshots: every note there is a live one.
      addMissingColumns(db, [["notes", "scope", "TEXT NOT NULL DEFAULT ''"]]);
      db.exec("CREATE INDEX IF NOT EXISTS notes_scope_time ON notes (scope, time_ms)");
    },
  },
];

/** The notes file's schema version this Churnscope migrates files to. */
export const NOTES_SCHEMA_VERSION = NOTES_MIGRATIONS.at(-1)!.version;

export class NoteStore {
  private constructor(
    private readonly engine: SqlEngine,
    private readonly ownsEngine: boolean,
  ) {}

  /** The notes file under the data directory, migrated. */
  static sqlite(path: string): NoteStore {
    mkdirSync(dirname(path), { recursive: true });
    const engine = new SqliteEngine(path);
    migrate(engine.db, "the notes store", NOTES_MIGRATIONS);
    return new NoteStore(engine, true);
  }

  /** The notes table of the store's PostgreSQL database (its schema steps make it), which the store closes. */
  static in(engine: SqlEngine): NoteStore {
    return new NoteStore(engine, false);
  }

  async add(input: unknown, author: string, scope: NoteScope = { live: true }, nowMs = Date.now()): Promise<Note> {
    const parsed = noteInputSchema.safeParse(input);
    if (!parsed.success) {
      const first = parsed.error.issues[0];
      throw badRequest(`note ${first.path.join(".") || "body"}: ${first.message}`);
    }
    const { timeMs, text } = parsed.data;
    const row = await this.engine.transaction((tx) =>
      tx.get<{ id: number }>("INSERT INTO notes (time_ms, text, author, created_ms, scope) VALUES (?, ?, ?, ?, ?) RETURNING id", [
        timeMs,
        text,
        author,
        nowMs,
        scopeText(scope),
      ]),
    );
    return { id: row!.id, timeMs, text, author, createdMs: nowMs };
  }

  between(startMs: number, endMs: number, scope: NoteScope = { live: true }): Promise<Note[]> {
    return this.engine.all<Note>(
      'SELECT id, time_ms AS "timeMs", text, author, created_ms AS "createdMs" FROM notes WHERE scope = ? AND time_ms BETWEEN ? AND ? ORDER BY time_ms, id',
      [scopeText(scope), startMs, endMs],
    );
  }

  async remove(id: number): Promise<void> {
    if ((await this.engine.run("DELETE FROM notes WHERE id = ?", [id])).changes === 0) throw notFound(`no note ${id}`);
  }

  async close(): Promise<void> {
    if (this.ownsEngine) await this.engine.close();
  }
}

export function noteMarker(note: Note): Marker {
  const label = note.text.length > 40 ? `${note.text.slice(0, 39)}…` : note.text;
  return {
    timeMs: note.timeMs,
    label,
    detail: `${note.text}\n— ${note.author}, added ${formatUtc(note.createdMs, false)}`,
    kind: "note",
    id: note.id,
  };
}
