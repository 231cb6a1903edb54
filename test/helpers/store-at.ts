/** A store named by one string, as the helper processes take it: a SQLite file's path, or a PostgreSQL URL. */
import type { PostgresSettings } from "@/lib/store/engine/postgres";
import { WriteStore } from "@/lib/store/store";

export const postgresSettings = (url: string, overrides: Partial<PostgresSettings> = {}): PostgresSettings => ({
  url,
  poolSize: 4,
  tls: { mode: "disable" },
  connectTimeoutMs: 5000,
  statementTimeoutMs: 10_000,
  ...overrides,
});

export function openStoreAt(where: string): Promise<WriteStore> {
  return /^postgres(ql)?:\/\//.test(where) ? WriteStore.open({ engine: "postgres", settings: postgresSettings(where) }) : WriteStore.open(where);
}
