/**
 * Versioned schema migrations, one list per database, applied in order when it opens, each in its own
 * transaction and recorded in `schema_migrations`. A database a newer Churnscope migrated further than this
 * one knows is refused rather than written to: this version cannot know what the newer schema means.
 */
import type Database from "better-sqlite3";

export interface Migration {
  version: number;
  description: string;
  apply(db: Database.Database): void;
}

export class SchemaTooNewError extends Error {}

export function migrate(db: Database.Database, what: string, migrations: readonly Migration[]): { fromVersion: number; toVersion: number } {
  db.exec("CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_ms INTEGER NOT NULL)");
  const current = db.prepare("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations");
  const fromVersion = (current.get() as { v: number }).v;
  const known = migrations.at(-1)?.version ?? 0;
  if (fromVersion > known)
    throw new SchemaTooNewError(
      `${what} has schema version ${fromVersion}, written by a newer Churnscope; this one knows versions up to ${known}: run that newer version, or give this one another data directory`,
    );
  for (const m of migrations) {
    if (m.version <= fromVersion) continue;
    db.transaction(() => {
      // Another process opening the same file (the recorder, a roll-up thread) may have applied it meanwhile.
      if ((current.get() as { v: number }).v >= m.version) return;
      m.apply(db);
      db.prepare("INSERT INTO schema_migrations (version, description, applied_ms) VALUES (?, ?, ?)").run(m.version, m.description, Date.now());
    }).immediate();
  }
  return { fromVersion, toVersion: Math.max(fromVersion, known) };
}

/** Adds each column a table made by an older Churnscope lacks (its older rows stay without a value). */
export function addMissingColumns(db: Database.Database, columns: readonly (readonly [table: string, column: string, type: string])[]): void {
  for (const [table, column, type] of columns) {
    const present = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
    if (!present.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
  }
}
