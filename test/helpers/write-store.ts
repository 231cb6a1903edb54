/**
 * A writer in another process, as `npm run recorder` is beside the dashboard: `tsx
 * test/helpers/write-store.ts <store path or PostgreSQL URL> <batches> <from ms>` stores batches of 50 writes, each
 * batch reading an object's last version first as the recorder does, a quarter hour apart from
 * `from`. Prints how many batches failed; each failure's message goes to stderr.
 */
import { openStoreAt } from "./store-at";

async function main(): Promise<void> {
  const [where, batches, fromMs] = process.argv.slice(2);
  const store = await openStoreAt(where);
  const key = (i: number) => ({ cluster: "c", group: "g", kind: "Connector", namespace: "ns", name: `w${i % 7}` });
  let failed = 0;
  for (let batch = 0; batch < Number(batches); batch++) {
    try {
      await store.batch(async () => {
        await store.latest(key(batch));
        for (let i = 0; i < 50; i++)
          await store.record(key(i), {
            tsMs: Number(fromMs) + batch * 900_000 + i,
            cls: "unrouted",
            writer: "w",
            source: "watch",
            heartbeat: false,
            changes: [],
            projection: {},
          });
      });
    } catch (error) {
      failed++;
      console.error((error as Error).message);
    }
  }
  await store.close();
  console.log(failed);
}

main().catch((error: Error) => {
  console.error(error.message);
  process.exit(1);
});
