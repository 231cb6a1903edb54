/** SQLite's error code on an error the store threw (SQLITE_BUSY, SQLITE_FULL, …), or undefined for any other error. */
export function sqliteCode(error: unknown): string | undefined {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" && code.startsWith("SQLITE_") ? code : undefined;
}
