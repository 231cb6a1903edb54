/**
 * What the server does once, when it starts (Next calls instrumentation.ts's register()): open the live
 * store with its roll-ups, clear audit uploads a stop left half-written, and begin recording if there
 * is a cluster to record. Each step that fails says so in the log; the views say why they cannot show.
 */
import type { ServerContext } from "./context";
import { removeLeftUploads } from "./handlers/audit";
import { startRecording } from "./recording";

export function startServer(ctx: ServerContext): void {
  const step = (what: string, run: () => void) => {
    try {
      run();
    } catch (error) {
      console.error(`churnscope: ${what}: ${(error as Error).message}`);
    }
  };
  step("could not open the live store", () => ctx.stores.openLive());
  step("could not look for half-written uploads", () => {
    const removed = removeLeftUploads(ctx.config.dataDir);
    if (removed > 0) console.log(`churnscope: removed ${removed} audit upload${removed === 1 ? "" : "s"} a stop left half-written`);
  });
  step("the recorder did not start", () => startRecording(ctx));
}
