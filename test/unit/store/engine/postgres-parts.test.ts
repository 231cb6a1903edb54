/** The PostgreSQL engine's pure parts: `?` numbered outside quotes and comments, what a failure says, which steps apply. */
import { describe, expect, it } from "vitest";
import { describeFailure, describeTarget, MIN_SERVER_VERSION, serverVersionText } from "@/lib/store/engine/open-postgres";
import { daysOf, partitionName, partitionsBefore } from "@/lib/store/engine/partitions";
import { numberedPlaceholders } from "@/lib/store/engine/placeholders";
import { migrationsToApply, SchemaTooNewError } from "@/lib/store/migrator";

describe("numberedPlaceholders", () => {
  it("numbers each ? in order", () => {
    expect(numberedPlaceholders("SELECT * FROM t WHERE a = ? AND b IN (?, ?)")).toBe("SELECT * FROM t WHERE a = $1 AND b IN ($2, $3)");
  });

  it("leaves a ? inside a string, a quoted identifier or a comment alone, doubled quotes included", () => {
    expect(numberedPlaceholders("SELECT 'what?', 'it''s ?', \"col?\" FROM t WHERE x = ? -- why?\nAND y = ? /* and ? */ AND z = ?")).toBe(
      "SELECT 'what?', 'it''s ?', \"col?\" FROM t WHERE x = $1 -- why?\nAND y = $2 /* and ? */ AND z = $3",
    );
  });

  it("keeps an unclosed quote or comment to the end rather than numbering inside it", () => {
    expect(numberedPlaceholders("SELECT ? FROM t WHERE a = 'x?")).toBe("SELECT $1 FROM t WHERE a = 'x?");
    expect(numberedPlaceholders("SELECT ? /* ?")).toBe("SELECT $1 /* ?");
  });
});

describe("what a failure to open says", () => {
  const url = "postgres://churnscope:s3cr%40t@db.internal:6432/records";

  it("names where, whom and the setting, never the password", () => {
    expect(describeTarget(url)).toEqual({ host: "db.internal", port: "6432", database: "records", user: "churnscope" });
    const cases: [unknown, RegExp][] = [
      [{ code: "ECONNREFUSED" }, /db\.internal:6432 refused the connection.*store\.url/],
      [{ code: "ENOTFOUND" }, /host db\.internal in store\.url is not known/],
      [{ code: "28P01", message: "password authentication failed" }, /refused the password of user churnscope: check store\.url/],
      [{ code: "3D000", message: "database does not exist" }, /no database records: create it/],
      [{ code: "42501", message: "permission denied for schema public" }, /user churnscope may not make the store's tables in records/],
      [{ message: "timeout expired" }, /did not answer within the connect timeout/],
      [{ message: "The server does not support SSL connections" }, /TLS to PostgreSQL at db\.internal:6432 failed.*store\.tls/],
      [new SchemaTooNewError("the database has schema version 9, written by a newer Churnscope"), /newer Churnscope/],
    ];
    for (const [error, said] of cases) {
      const message = describeFailure(error, url, "store.url");
      expect(message).toMatch(said);
      expect(message).not.toContain("s3cr");
    }
  });

  it("reads the server's version number as people write it", () => {
    expect(serverVersionText(150018)).toBe("15.18");
    expect(serverVersionText(90624)).toBe("9.6.24");
    expect(serverVersionText(MIN_SERVER_VERSION)).toBe("14.0");
  });
});

describe("migrationsToApply", () => {
  const steps = [{ version: 1 }, { version: 2 }, { version: 3 }];

  it("takes the steps past the database's version, in order", () => {
    expect(migrationsToApply("db", 0, steps).map((m) => m.version)).toEqual([1, 2, 3]);
    expect(migrationsToApply("db", 2, steps).map((m) => m.version)).toEqual([3]);
    expect(migrationsToApply("db", 3, steps)).toEqual([]);
  });

  it("refuses a database a newer Churnscope migrated further", () => {
    expect(() => migrationsToApply("the database in store.url", 4, steps)).toThrow(SchemaTooNewError);
    expect(() => migrationsToApply("the database in store.url", 4, steps)).toThrow(/schema version 4.*versions up to 3/);
  });
});

describe("time partitions", () => {
  const day = 86_400_000;

  it("put each time in its UTC day, [day, next day), and name the day's partition", () => {
    expect(daysOf([5 * day, 5 * day + day - 1, 7 * day + 1, 5 * day + 3])).toEqual([5, 7]);
    expect(partitionName("writes", 20_433)).toBe("writes_d20433");
    expect(() => partitionName("writes", -1)).toThrow(/before 1970/);
  });

  it("let retention drop only the days wholly before it, and nothing that is not a day of that table", () => {
    const names = ["writes_d5", "writes_d6", "writes_d7", "field_changes_d5", "writes_dx", "writes_old"];
    expect(partitionsBefore(names, "writes", 7 * day)).toEqual(["writes_d5", "writes_d6"]);
    expect(partitionsBefore(names, "writes", 7 * day - 1)).toEqual(["writes_d5"]);
    expect(partitionsBefore(names, "field_changes", 100 * day)).toEqual(["field_changes_d5"]);
  });
});
