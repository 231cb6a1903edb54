/**
 * Two processes rolling up one store at once (the dashboard and `npm run recorder` both keep the
 * Objects ranking's rollups current): every quarter hour is rolled once, by one of them, and the
 * ranking equals the writes.
 */
import { spawn } from "node:child_process";
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { WriteStore, type StoredWrite } from "@/lib/store/store";
import { ROOT } from "../helpers/root";

const DAY = 86_400_000;
const D0 = Date.UTC(2026, 8, 1);
const DAYS = 30;

function rollInAnotherProcess(path: string, nowMs: number): Promise<number> {
  const child = spawn(process.execPath, [join(ROOT, "node_modules", "tsx", "dist", "cli.mjs"), join(ROOT, "test", "helpers", "roll-store.ts"), path, String(nowMs)], { cwd: ROOT });
  let out = "";
  let err = "";
  child.stdout.on("data", (chunk: Buffer) => (out += chunk.toString()));
  child.stderr.on("data", (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) => child.on("exit", (code) => (code === 0 ? resolve(Number(out.trim())) : reject(new Error(`roll-store exited ${code}: ${err}`)))));
}

describe("rollups from two processes", () => {
  it("roll each quarter hour once, and the ranking equals the writes", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "churnscope-roll-race-")), "t.sqlite");
    const store = new WriteStore(path);
    // Every quarter hour of 30 days holds writes: 3 per quarter, to 7 objects in turn, every 5th routed.
    const truth = new Map<string, { writes: number; routed: number }>();
    store.batch(() => {
      for (let i = 0; i < DAYS * 96 * 3; i++) {
        const name = `o${i % 7}`;
        const cls: StoredWrite["cls"] = i % 5 === 0 ? "routed" : "unrouted";
        const tsMs = D0 + Math.floor(i / 3) * 900_000 + 1 + (i % 3) * 1000;
        store.record({ cluster: "c", group: "g", kind: "Connector", namespace: "ns", name }, { tsMs, cls, writer: "w", source: "replay", heartbeat: false, changes: [{ path: "status.x", before: 1, after: 2 }], projection: {} });
        const t = truth.get(name) ?? { writes: 0, routed: 0 };
        t.writes++;
        if (cls === "routed") t.routed++;
        truth.set(name, t);
      }
    });
    store.close();

    const nowMs = D0 + (DAYS + 1) * DAY;
    const rolled = await Promise.all([rollInAnotherProcess(path, nowMs), rollInAnotherProcess(path, nowMs)]);
    // Both took part, and between them rolled each quarter hour once.
    expect(rolled.every((n) => n > 0), `rolled ${rolled.join(" and ")}`).toBe(true);
    expect(rolled[0] + rolled[1]).toBe(DAYS * 96);

    const reopened = new WriteStore(path);
    expect(reopened.db.prepare("SELECT COUNT(*) AS n FROM rank_days_done").get()).toEqual({ n: DAYS });
    const { rows } = reopened.objects({ fromMs: D0, toMs: D0 + DAYS * DAY }, 100, 0);
    expect(Object.fromEntries(rows.map((r) => [r.name, { writes: r.writes, routed: r.routed }]))).toEqual(Object.fromEntries(truth));
    reopened.close();
  }, 60_000);
});
