/**
 * Versioned schema migrations, one list per database, applied in order when it opens, each in its own
 * transaction and recorded in `schema_migrations`. A database a newer Churnscope migrated further than this
 * one knows is refused rather than written to: this version cannot know what the newer schema means. What to
 * apply is decided here once (`migrationsToApply`); each engine applies it its own way.
 */
import type Database from "better-sqlite3";
import type { SqlEngine, SqlQueries } from "./engine/types";

export interface Migration {
  version: number;
  description: string;
  apply(db: Database.Database): void;
}

/** A PostgreSQL step: its statements run in the migration's transaction. */
export interface PostgresMigration {
  version: number;
  description: string;
  apply(tx: SqlQueries): Promise<void>;
}

export class SchemaTooNewError extends Error {}

const MIGRATIONS_TABLE = "CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, description TEXT NOT NULL, applied_ms BIGINT NOT NULL)";

/** The steps past `fromVersion`, in order; a database past the last step known is refused. */
export function migrationsToApply<M extends { version: number }>(what: string, fromVersion: number, migrations: readonly M[]): M[] {
  const known = migrations.at(-1)?.version ?? 0;
  if (fromVersion > known)
    throw new SchemaTooNewError(
      `${what} has schema version ${fromVersion}, written by a newer Churnscope; this one knows versions up to ${known}: run that newer version, or give this one another data directory`,
    );
  return migrations.filter((m) => m.version > fromVersion);
}

export function migrate(db: Database.Database, what: string, migrations: readonly Migration[]): { fromVersion: number; toVersion: number } {
  db.exec(MIGRATIONS_TABLE);
  const current = db.prepare("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations");
  const fromVersion = (current.get() as { v: number }).v;
  for (const m of migrationsToApply(what, fromVersion, migrations)) {
    db.transaction(() => {
      // Another process opening the same file (the recorder, a roll-up thread) may have applied it meanwhile.
      if ((current.get() as { v: number }).v >= m.version) return;
      m.apply(db);
      db.prepare("INSERT INTO schema_migrations (version, description, applied_ms) VALUES (?, ?, ?)").run(m.version, m.description, Date.now());
    }).immediate();
  }
  return { fromVersion, toVersion: Math.max(fromVersion, migrations.at(-1)?.version ?? 0) };
}

/** Any number, the same in every Churnscope: replicas starting together take this lock, and one of them migrates. */
const MIGRATION_LOCK = 7_420_135_001;

export async function migratePostgres(
  engine: SqlEngine,
  what: string,
  migrations: readonly PostgresMigration[],
): Promise<{ fromVersion: number; toVersion: number }> {
  return engine.transaction(async (tx) => {
    await tx.get("SELECT pg_advisory_xact_lock(?)", [MIGRATION_LOCK]);
    await tx.exec(MIGRATIONS_TABLE);
    const fromVersion = (await tx.get<{ v: number }>("SELECT COALESCE(MAX(version), 0) AS v FROM schema_migrations"))!.v;
    // One transaction for every step (PostgreSQL's schema changes are transactional): a failed step leaves none applied.
    for (const m of migrationsToApply(what, fromVersion, migrations)) {
      await m.apply(tx);
      await tx.run("INSERT INTO schema_migrations (version, description, applied_ms) VALUES (?, ?, ?)", [m.version, m.description, Date.now()]);
    }
    return { fromVersion, toVersion: Math.max(fromVersion, migrations.at(-1)?.version ?? 0) };
  });
}

/** Adds each column a table made by an older Churnscope lacks (its older rows stay without a value). */
export function addMissingColumns(db: Database.Database, columns: readonly (readonly [table: string, column: string, type: string])[]): void {
  for (const [table, column, type] of columns) {
    const present = db.prepare(`PRAGMA table_info(${table})`).all() as { name: string }[];
    if (!present.some((c) => c.name === column)) db.exec(`ALTER TABLE ${table} ADD COLUMN ${column} ${type}`);
  }
}
