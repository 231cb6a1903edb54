/** The audit webhook's spool on a real directory and its drain into a real SQLite store. */
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { DEFAULT_PROFILES } from "@/lib/churn/profiles";
import { AuditSpool, spooledBatches, spoolName, SpoolFullError } from "@/lib/audit/spool";
import { fileSpool, SpoolDrain } from "@/lib/audit/spool-drain";
import { WriteStore } from "@/lib/store/store";
import { auditEvent } from "../../helpers/audit-log";

const START = Date.UTC(2026, 10, 29, 9, 0, 0);
const dir = () => join(mkdtempSync(join(tmpdir(), "churnscope-spool-")), "audit-spool");
const batch = (from: number, count: number) =>
  Buffer.from(
    JSON.stringify({
      kind: "EventList",
      apiVersion: "audit.k8s.io/v1",
      items: Array.from({ length: count }, (_, i) =>
        auditEvent({
          auditID: `e-${from + i}`,
          verb: "update",
          resource: "configmaps",
          namespace: "a",
          name: `c${(from + i) % 7}`,
          level: "Metadata",
          receivedMs: START + from + i,
        }),
      ),
    }),
  );

describe("AuditSpool", () => {
  it("keeps each batch in a file of its own, in order, and finds them again after a stop (a half-written one is gone)", async () => {
    const path = dir();
    const spool = new AuditSpool(path, 1_000_000);
    await spool.accept("prod", batch(0, 3));
    await spool.accept("edge-1", batch(3, 2));
    expect(spooledBatches(path)).toEqual([spoolName(1, "prod"), spoolName(2, "edge-1")]);
    writeFileSync(join(path, `${spoolName(3, "prod")}.tmp`), "{half");
    const again = new AuditSpool(path, 1_000_000);
    expect(again.queued).toEqual({ batches: 2, bytes: batch(0, 3).length + batch(3, 2).length });
    expect(readdirSync(path).some((name) => name.endsWith(".tmp"))).toBe(false);
    // Numbering goes on after the last batch a stop left.
    await again.accept("prod", batch(5, 1));
    expect(spooledBatches(path).at(-1)).toBe(spoolName(3, "prod"));
  });

  it("refuses a batch past its bound with 429 and Retry-After, and takes it once the drain made room", async () => {
    const spool = new AuditSpool(dir(), 1_000);
    const big = batch(0, 4);
    expect(big.length).toBeGreaterThan(1_000);
    await spool.accept("prod", big); // an empty spool takes any batch the webhook's own bound let through
    let refused: unknown;
    try {
      await spool.accept("prod", batch(4, 1));
    } catch (error) {
      refused = error;
    }
    expect(refused).toBeInstanceOf(SpoolFullError);
    expect(refused).toMatchObject({ httpStatus: 429, retryAfterSeconds: 1 });
    spool.drained(big.length);
    expect(await spool.accept("prod", batch(4, 1))).toEqual({ batches: 1, bytes: batch(4, 1).length });
  });
});

describe("SpoolDrain", () => {
  it("stores every batch once, oldest first, removes each file after its transaction, and keeps an unreadable one aside", async () => {
    const path = dir();
    const spool = new AuditSpool(path, 10_000_000);
    await spool.accept("prod", batch(0, 50));
    writeFileSync(join(path, spoolName(2, "prod")), "{damaged");
    const spool2 = new AuditSpool(path, 10_000_000);
    await spool2.accept("prod", batch(50, 30));
    const store = await WriteStore.open(join(path, "..", "churnscope.sqlite"));
    const drain = new SpoolDrain(fileSpool(path), store, DEFAULT_PROFILES, 3650 * 86_400_000);
    const seen: { name: string; error?: string }[] = [];
    expect(await drain.drainAll((b) => seen.push(b))).toBe(3);
    expect(seen.map((b) => [b.name, b.error !== undefined])).toEqual([
      [spoolName(1, "prod"), false],
      [spoolName(2, "prod"), true],
      [spoolName(3, "prod"), false],
    ]);
    expect(spooledBatches(path)).toEqual([]);
    expect(existsSync(join(path, "failed", spoolName(2, "prod")))).toBe(true);
    const count = async () => (await store.database.sql().get<{ n: number }>("SELECT COUNT(*) AS n FROM audit_requests"))!.n;
    expect(await count()).toBe(80);
    // A stop after the transaction but before the file went: the batch read again adds nothing.
    writeFileSync(join(path, spoolName(4, "prod")), batch(0, 50));
    await drain.drainAll(() => undefined);
    expect(await count()).toBe(80);
    await store.close();
  });
});
