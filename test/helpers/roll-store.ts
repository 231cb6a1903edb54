/**
 * A second process rolling up one store: `tsx test/helpers/roll-store.ts <store path> <now ms>` rolls
 * a quarter hour at a time until nothing is pending, then prints how many it rolled. Used to race two
 * processes over one store (the dashboard and `npm run recorder` share one in production).
 */
import { WriteStore } from "@/lib/store/store";

const [path, nowMs] = process.argv.slice(2);
const store = new WriteStore(path);
let rolled = 0;
while (store.rollPending(Number(nowMs), 1) === 1) rolled++;
store.close();
console.log(rolled);
