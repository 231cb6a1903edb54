/**
 * Opening the PostgreSQL store: connect, check the server and the user, apply the schema's steps. Each way this
 * fails (no server, a wrong password, no such database, no right to make tables, a server too old, a schema from a
 * newer Churnscope) is one message naming the setting to fix, never the password.
 */
import { migratePostgres, SchemaTooNewError } from "../migrator";
import { PostgresEngine, type PostgresSettings } from "./postgres";
import { POSTGRES_MIGRATIONS } from "./postgres-schema";

/** The oldest PostgreSQL the store runs on (the oldest its project still supported when this was written). */
export const MIN_SERVER_VERSION = 140000;

export class DatabaseUnavailableError extends Error {}

/** Where a URL points, without its password: what a message may say. */
export function describeTarget(url: string): { host: string; port: string; database: string; user: string } {
  try {
    const parsed = new URL(url);
    return {
      host: parsed.hostname || "localhost",
      port: parsed.port || "5432",
      database: decodeURIComponent(parsed.pathname.replace(/^\//, "")) || decodeURIComponent(parsed.username) || "postgres",
      user: decodeURIComponent(parsed.username) || "(the process's user)",
    };
  } catch {
    return { host: "(unreadable URL)", port: "", database: "", user: "" };
  }
}

/** One sentence for why the store could not open, naming `setting`. */
export function describeFailure(error: unknown, url: string, setting: string): string {
  const { host, port, database, user } = describeTarget(url);
  const where = `PostgreSQL at ${host}:${port}`;
  const e = error as { code?: string; message?: string };
  switch (e.code) {
    case "ECONNREFUSED":
      return `${where} refused the connection: is it running, and is ${setting} right?`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `the host ${host} in ${setting} is not known to DNS`;
    case "ETIMEDOUT":
    case "EHOSTUNREACH":
    case "ENETUNREACH":
      return `${where} could not be reached (${e.code}): check ${setting} and the network between`;
    case "28P01":
      return `${where} refused the password of user ${user}: check ${setting}`;
    case "28000":
      return `${where} does not let user ${user} connect to ${database} from here (its pg_hba.conf): ${e.message}`;
    case "3D000":
      return `${where} has no database ${database}: create it (CREATE DATABASE ${database}) or fix ${setting}`;
    case "42501":
      return `user ${user} may not make the store's tables in ${database} on ${where} (${e.message}): grant it CREATE on the schema, or use the database's owner in ${setting}`;
    case "57P03":
      return `${where} is starting up or shutting down; it is tried again`;
    case "53300":
      return `${where} has no connection free (too many clients): lower store.poolSize or raise the server's max_connections`;
  }
  if (error instanceof SchemaTooNewError) return error.message;
  const message = e.message ?? String(error);
  if (/timeout/i.test(message)) return `${where} did not answer within the connect timeout: check ${setting} and the network between`;
  if (/SSL|TLS|certificate/i.test(message)) return `TLS to ${where} failed (${message}): check store.tls`;
  return `${where} (${setting}): ${message}`;
}

/** Opens and migrates the store's database, or throws DatabaseUnavailableError with the reason. */
export async function openPostgres(settings: PostgresSettings, setting = "store.url"): Promise<PostgresEngine> {
  const engine = new PostgresEngine(settings);
  try {
    const server = await engine.get<{ version: number }>("SELECT current_setting('server_version_num')::int AS version");
    if (server!.version < MIN_SERVER_VERSION)
      throw new DatabaseUnavailableError(
        `${describeTarget(settings.url).host} runs PostgreSQL ${serverVersionText(server!.version)}; the store needs ${serverVersionText(MIN_SERVER_VERSION)} or newer`,
      );
    await migratePostgres(engine, `the database in ${setting}`, POSTGRES_MIGRATIONS);
    return engine;
  } catch (error) {
    await engine.close().catch(() => undefined);
    if (error instanceof DatabaseUnavailableError) throw error;
    throw new DatabaseUnavailableError(describeFailure(error, settings.url, setting));
  }
}

/** 150018 as "15.18", 90624 as "9.6.24" */
export function serverVersionText(versionNum: number): string {
  const major = Math.floor(versionNum / 10000);
  return major >= 10 ? `${major}.${versionNum % 10000}` : `${Math.floor(versionNum / 10000)}.${Math.floor(versionNum / 100) % 100}.${versionNum % 100}`;
}
