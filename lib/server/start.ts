/**
 * What the server does once, when it starts (Next calls instrumentation.ts's register()): open the live
 * store with its roll-ups and the notes, clear audit uploads a stop left half-written, begin
 * recording if there is a cluster to record, and drain the audit webhook's spool and read the audit buckets if any are configured. Each step that fails says so in the log; the views say
 * why they cannot show. A store that did not open is tried again every 30 s (a data directory mounted
 * late), and recording begins once the live store is open.
 */
import type { ServerContext } from "./context";
import { intake, removeLeftUploads } from "./handlers/audit";
import { startRecording } from "./recording";

export async function startServer(ctx: ServerContext): Promise<void> {
  const step = async (what: string, run: () => unknown) => {
    try {
      await run();
    } catch (error) {
      console.error(`churnscope: ${what}: ${(error as Error).message}`);
    }
  };
  await step("could not look for half-written uploads", () => {
    const removed = removeLeftUploads(ctx.config.dataDir);
    if (removed > 0) console.log(`churnscope: removed ${removed} audit upload${removed === 1 ? "" : "s"} a stop left half-written`);
  });
  let recording = false;
  const openStores = async () => {
    await step("could not open the notes store", () => ctx.notesStore.open());
    await step("could not open the live store", () => ctx.stores.live.open());
    if (ctx.stores.live.opened && !recording) {
      recording = true;
      await step("the recorder did not start", () => startRecording(ctx));
      // What the webhook spooled before a stop is drained now, not at its next batch; buckets are read from the start.
      if (ctx.config.audit.webhookToken || ctx.config.audit.sources.length > 0) await step("the audit intake did not start", () => intake(ctx));
    }
    return ctx.stores.live.opened && ctx.notesStore.opened;
  };
  if (await openStores()) return;
  const retry = setInterval(() => void openStores().then((open) => open && clearInterval(retry)), RETRY_MS);
  retry.unref();
}

const RETRY_MS = 30_000;
