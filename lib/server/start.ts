/**
 * What the server does once, when it starts (Next calls instrumentation.ts's register()): open the replay ahead
 * where it is all the pages can show, open the live store with its roll-ups and the notes, clear audit uploads a stop left half-written, begin
 * recording if there is a cluster to record, and drain the audit webhook's spool and read the audit buckets if any are configured. Each step that fails says so in the log; the views say
 * why they cannot show. A store that did not open is tried again every 30 s (a data directory mounted
 * late), and recording begins once the live store is open.
 */
import type { ServerContext } from "./context";
import { intake, removeLeftUploads } from "./handlers/audit";
import { REPLAY_ID } from "../snapshot/store";
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
  if (showsOnlyTheReplay(ctx)) void step("could not open the replay ahead", () => openReplayAhead(ctx));
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

/** Nothing configured to read (no Prometheus, cluster or audit intake): every page a visitor lands on shows the replay. */
const showsOnlyTheReplay = ({ config }: ServerContext) =>
  !config.prometheus && config.clusters.length === 0 && !config.audit.webhookToken && config.audit.sources.length === 0;

/**
 * Opened as the server starts (the held part the build wrote, about 0.3 s of a core; from its bundle in a thread, 1.6 s,
 * where the build wrote none) rather than on the first visit, which shares the opening if it comes sooner. Only where
 * the pages can show nothing else: elsewhere it would cost a core and the held snapshot's memory for a view nobody
 * may open.
 */
async function openReplayAhead(ctx: ServerContext): Promise<void> {
  const startMs = Date.now();
  console.log("churnscope: nothing configured to read: opening the replay, which the pages show, ahead of the first visit");
  await ctx.snapshots.open(REPLAY_ID);
  // Its object store too (a copy of the one the build made), which the Objects and Clients pages read.
  await ctx.stores.snapshotStore(REPLAY_ID);
  console.log(`churnscope: the replay and its object store opened ahead in ${Date.now() - startMs} ms`);
}
