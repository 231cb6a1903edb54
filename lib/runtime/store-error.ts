/**
 * Errors the store's database threw, on either engine: SQLite's (SQLITE_BUSY, SQLITE_FULL, …) and PostgreSQL's (a
 * SQLSTATE from the server, or a connection that failed or broke). What a request answers for each, and whether an
 * error came from the database at all (the recorder then stops storing, where another error skips one event).
 */
const SQLSTATE = /^[0-9A-Z]{5}$/;
const CONNECTION_CODES = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENETUNREACH", "ENOTFOUND", "EAI_AGAIN"]);
const CONNECTION_MESSAGES =
  /Connection terminated|timeout exceeded when trying to connect|Client has encountered a connection error|Cannot use a pool after calling end/;

function codeOf(error: unknown): string | undefined {
  const code = error instanceof Error ? (error as { code?: unknown }).code : undefined;
  return typeof code === "string" ? code : undefined;
}

/** SQLite's error code on an error the store threw, or undefined for any other error. */
export function sqliteCode(error: unknown): string | undefined {
  const code = codeOf(error);
  return code?.startsWith("SQLITE_") ? code : undefined;
}

/** Whether PostgreSQL could not be reached, or the connection broke (the server restarted, say). */
export function databaseUnreachable(error: unknown): boolean {
  const code = codeOf(error);
  if (code !== undefined && (CONNECTION_CODES.has(code) || code.startsWith("08") || code === "57P01" || code === "57P02" || code === "57P03")) return true;
  return error instanceof Error && CONNECTION_MESSAGES.test(error.message);
}

/** Whether the database threw it (on either engine), rather than the code around it. */
export function isStoreError(error: unknown): boolean {
  if (sqliteCode(error) !== undefined || databaseUnreachable(error)) return true;
  const e = error as { code?: unknown; severity?: unknown };
  return typeof e?.code === "string" && SQLSTATE.test(e.code) && typeof e.severity === "string";
}

/**
 * The database refusing work for a reason outside the request (another writer holding the lock past the wait, a
 * full disk, the server down): a status that says so, and that a sender such as the audit webhook retries. Null for
 * anything else.
 */
export function storeFailureOf(error: unknown): { httpStatus: number; errorType: string; message: string } | null {
  const code = codeOf(error) ?? "";
  if (databaseUnreachable(error))
    return { httpStatus: 503, errorType: "store_unavailable", message: "the store's database cannot be reached; try again (see the server log)" };
  if (code.startsWith("SQLITE_FULL") || code === "53100")
    return { httpStatus: 507, errorType: "store_full", message: "the store's disk is full: free space, or shorten recorder.retentionDays" };
  if (code.startsWith("SQLITE_BUSY") || code.startsWith("SQLITE_LOCKED") || ["40001", "40P01", "55P03", "57014", "53300"].includes(code))
    return { httpStatus: 503, errorType: "store_busy", message: "the store is busy with another writer; try again" };
  if (code.startsWith("SQLITE_")) return { httpStatus: 503, errorType: "store_unavailable", message: `the store cannot be used (${code}); see the server log` };
  return null;
}
