/**
 * Processes sharing one store, as the dashboard and `npm run recorder` do on one SQLite file, and as replicas do on one
 * PostgreSQL database: two rolling up the Objects ranking at once roll each quarter hour once between them, a writer
 * beside them is never refused, and the ranking equals the writes.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/root";
import { openStoreAt } from "../helpers/store-at";
import { storeEngines } from "../helpers/store-engines";
import type { StoredWrite } from "@/lib/wire/objects";

const DAY = 86_400_000;
const D0 = Date.UTC(2026, 8, 1);

/** Runs a helper script in its own process; resolves with the number it prints. */
function inAnotherProcess(script: string, args: (string | number)[]): Promise<number> {
  const child = spawn(process.execPath, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "test", "helpers", script), ...args.map(String)], {
    cwd: ROOT,
  });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) =>
    child.on("exit", (code) => (code === 0 && err === "" ? resolve(Number(out.trim())) : reject(new Error(`${script} exited ${code}: ${err}`)))),
  );
}

describe.each(storeEngines())("processes sharing one store on %s", (name, engine) => {
  // Each roll-up step is a transaction of a few statements: PostgreSQL's round trips make a step slower, so fewer days.
  const DAYS = name === "SQLite" ? 30 : 8;
  /** A store whose every quarter hour of 30 days holds 3 writes, to 7 objects in turn, every 5th routed; and its counts per object. */
  async function buildStore() {
    const where = await engine.place();
    const store = await openStoreAt(where);
    const truth = new Map<string, { writes: number; routed: number }>();
    await store.batch(async () => {
      for (let i = 0; i < DAYS * 96 * 3; i++) {
        const name = `o${i % 7}`;
        const cls: StoredWrite["cls"] = i % 5 === 0 ? "routed" : "unrouted";
        const tsMs = D0 + Math.floor(i / 3) * 900_000 + 1 + (i % 3) * 1000;
        await store.record(
          { cluster: "c", group: "g", kind: "Connector", namespace: "ns", name },
          { tsMs, cls, writer: "w", source: "replay", heartbeat: false, changes: [{ path: "status.x", before: 1, after: 2 }], projection: {} },
        );
        const t = truth.get(name) ?? { writes: 0, routed: 0 };
        t.writes++;
        if (cls === "routed") t.routed++;
        truth.set(name, t);
      }
    });
    await store.close();
    return { path: where, truth };
  }

  async function ranking(path: string, toMs: number) {
    const store = await openStoreAt(path);
    try {
      const { rows } = await store.objects({ fromMs: D0, toMs }, 100, 0);
      return Object.fromEntries(rows.map((r) => [r.name, { writes: r.writes, routed: r.routed }]));
    } finally {
      await store.close();
    }
  }

  it("two rolling up at once roll each quarter hour once, and the ranking equals the writes", async () => {
    const { path, truth } = await buildStore();
    const nowMs = D0 + (DAYS + 1) * DAY;
    const barrier = mkdtempSync(join(tmpdir(), "churnscope-roll-barrier-"));
    const rolled = await Promise.all([
      inAnotherProcess("roll-store.ts", [path, nowMs, barrier, 2]),
      inAnotherProcess("roll-store.ts", [path, nowMs, barrier, 2]),
    ]);
    // Both took part, and between them rolled each quarter hour once.
    expect(
      rolled.every((n) => n > 0),
      `rolled ${rolled.join(" and ")}`,
    ).toBe(true);
    expect(rolled[0] + rolled[1]).toBe(DAYS * 96);
    const store = await openStoreAt(path);
    expect(await store.database.sql().get("SELECT COUNT(*) AS n FROM rank_days_done")).toEqual({ n: DAYS });
    await store.close();
    expect(await ranking(path, D0 + DAYS * DAY)).toEqual(Object.fromEntries(truth));
  }, 60_000);

  it("a writer beside two processes rolling up is never refused, and every write counts once", async () => {
    const { path, truth } = await buildStore();
    const batches = 400;
    const writerFrom = D0 + DAYS * DAY;
    const nowMs = writerFrom + 5 * DAY;
    const [failed] = await Promise.all([
      inAnotherProcess("write-store.ts", [path, batches, writerFrom]),
      inAnotherProcess("roll-store.ts", [path, nowMs]),
      inAnotherProcess("roll-store.ts", [path, nowMs]),
    ]);
    expect(failed).toBe(0);
    // The writer's 50 writes a batch go to 7 objects of their own, in turn.
    for (let i = 0; i < 50; i++) {
      const t = truth.get(`w${i % 7}`) ?? { writes: 0, routed: 0 };
      t.writes += batches;
      truth.set(`w${i % 7}`, t);
    }
    expect(await ranking(path, nowMs)).toEqual(Object.fromEntries(truth));
  }, 60_000);
});
