/** A live store filled before the dashboard starts, as a recorder or an audit log leaves it: writes over whole past days. */
import { join } from "node:path";
import Database from "better-sqlite3";
import { WriteStore } from "@/lib/store/store";

export const LIVE_DAY0 = Date.UTC(2026, 10, 20);

/** Writes every 3 minutes of `days` days from LIVE_DAY0 to 9 Connectors in turn, every 4th routed; returns writes per object. */
export async function fillLiveStore(dataDir: string, days: number): Promise<Map<string, { writes: number; routed: number }>> {
  const store = await WriteStore.open(join(dataDir, "churnscope.sqlite"));
  const truth = new Map<string, { writes: number; routed: number }>();
  await store.batch(async () => {
    for (let i = 0; i < days * 480; i++) {
      const name = `o${i % 9}`;
      const cls = i % 4 === 0 ? "routed" : "unrouted";
      await store.record(
        { cluster: "milo", group: "networking.datumapis.com", kind: "Connector", namespace: "p", name },
        { tsMs: LIVE_DAY0 + i * 180_000 + 1, cls, writer: "w", source: "audit", heartbeat: false, changes: [], projection: {} },
      );
      const t = truth.get(name) ?? { writes: 0, routed: 0 };
      t.writes++;
      if (cls === "routed") t.routed++;
      truth.set(name, t);
    }
  });
  await store.close();
  return truth;
}

/** How many days of the live store are rolled up, read without disturbing the server. */
export function liveDaysRolledUp(dataDir: string): number {
  const db = new Database(join(dataDir, "churnscope.sqlite"), { readonly: true });
  try {
    return (db.prepare("SELECT COUNT(*) AS n FROM rank_days_done").get() as { n: number }).n;
  } finally {
    db.close();
  }
}
