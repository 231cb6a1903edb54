/**
 * A second process rolling up one store: `tsx test/helpers/roll-store.ts <store path> <now ms> [<barrier dir> <parties>]`
 * rolls a quarter hour at a time until nothing is pending, then prints how many it rolled. Used to race two
 * processes over one store (the dashboard and `npm run recorder` share one in production). With a barrier,
 * it opens the store, then starts only when all parties have: otherwise one process's startup can outlast
 * the other's whole run, and there is no race.
 */
import { readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WriteStore } from "@/lib/store/store";

const [path, nowMs, barrierDir, parties] = process.argv.slice(2);
const store = new WriteStore(path);
if (barrierDir) {
  writeFileSync(join(barrierDir, String(process.pid)), "");
  const deadline = Date.now() + 30_000;
  while (readdirSync(barrierDir).length < Number(parties)) {
    if (Date.now() > deadline) throw new Error("the other parties never arrived at the barrier");
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 5);
  }
}
let rolled = 0;
while (store.rollPending(Number(nowMs), 1) === 1) rolled++;
store.close();
console.log(rolled);
