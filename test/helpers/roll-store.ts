/**
 * A second process rolling up one store: `tsx test/helpers/roll-store.ts <store path or PostgreSQL URL> <now ms> [<barrier dir> <parties>]`
 * rolls a quarter hour at a time until nothing is pending, then prints how many it rolled. Used to race two
 * processes over one store (the dashboard and `npm run recorder` share one in production). With a barrier,
 * it opens the store, then starts only when all parties have: otherwise one process's startup can outlast
 * the other's whole run, and there is no race.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { openStoreAt } from "./store-at";

async function main(): Promise<void> {
  const [where, nowMs, barrierDir, parties] = process.argv.slice(2);
  const store = await openStoreAt(where);
  if (barrierDir) {
    writeFileSync(join(barrierDir, String(process.pid)), "");
    const deadline = Date.now() + 30_000;
    while (readdirSync(barrierDir).length < Number(parties)) {
      if (Date.now() > deadline) throw new Error("the other parties never arrived at the barrier");
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
    }
  }
  let rolled = 0;
  while ((await store.rollPending(Number(nowMs), 1)) === 1) rolled++;
  await store.close();
  console.log(rolled);
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
