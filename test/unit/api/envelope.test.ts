/** How thrown errors become API answers: SQLite's own refusals, raised by a real database, get a status that says why. */
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import Database from "better-sqlite3";
import { describe, expect, it } from "vitest";
import { ApiFailure, failureOf } from "@/lib/api/envelope";

function thrown(work: () => unknown): unknown {
  try {
    work();
  } catch (error) {
    return error;
  }
  throw new Error("expected a failure");
}

describe("failureOf", () => {
  it("answers a store locked by another writer with 503 store_busy, and one refusing writes with 503 store_unavailable", () => {
    const path = join(mkdtempSync(join(tmpdir(), "churnscope-envelope-")), "t.sqlite");
    const holder = new Database(path);
    holder.exec("CREATE TABLE t (x)");
    holder.exec("BEGIN IMMEDIATE");
    const other = new Database(path, { timeout: 0 });
    expect(failureOf(thrown(() => other.exec("INSERT INTO t VALUES (1)")))).toEqual({
      httpStatus: 503,
      body: { status: "error", errorType: "store_busy", error: "the store is busy with another writer; try again" },
    });
    holder.exec("ROLLBACK");
    other.pragma("query_only = ON");
    const refused = failureOf(thrown(() => other.exec("INSERT INTO t VALUES (1)")));
    expect(refused.httpStatus).toBe(503);
    expect(refused.body.errorType).toBe("store_unavailable");
    expect(refused.body.error).toMatch(/^the store cannot be used \(SQLITE_READONLY\)/);
  });

  it("keeps its own failures, and hides anything else behind 500 internal", () => {
    expect(failureOf(new ApiFailure(413, "too_large", "too big"))).toEqual({
      httpStatus: 413,
      body: { status: "error", errorType: "too_large", error: "too big" },
    });
    expect(failureOf(new Error("secret detail"))).toEqual({
      httpStatus: 500,
      body: { status: "error", errorType: "internal", error: "internal error; see the server log" },
    });
  });
});
