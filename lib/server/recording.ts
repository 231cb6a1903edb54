/**
 * The dashboard records in-process when there is something to record (clusters in the config, or
 * a kubeconfig / in-cluster service account), into the same live store the object views read.
 */
import { clustersToRecord, startRecorder, type Recorder } from "../recorder/recorder";
import type { ServerContext } from "./context";

/** Starts recording, once, at the server's start; null when there is nothing to record. */
export function startRecording(ctx: ServerContext): Recorder | null {
  if (ctx.recording.recorder !== undefined) return ctx.recording.recorder;
  const clusters = clustersToRecord(ctx.config);
  ctx.recording.recorder =
    clusters.length === 0 ? null : startRecorder(ctx.config, ctx.stores.liveStore(), clusters, (line) => console.log(`churnscope: ${line}`), false);
  if (ctx.recording.recorder) console.log(`churnscope: recording ${clusters.map((c) => c.name).join(", ")}`);
  return ctx.recording.recorder;
}

export function runningRecorder(ctx: ServerContext): Recorder | null {
  return ctx.recording.recorder ?? null;
}

/**
 * Whether the object views have live data to show: a recorder runs here, or something (a recorder, ingested audit logs)
 * filled the store. `kinds`: the live store's kinds, when the caller has read them already.
 */
export async function hasLiveObjects(ctx: ServerContext, kinds?: readonly unknown[]): Promise<boolean> {
  return runningRecorder(ctx) !== null || (kinds ?? (await ctx.stores.liveStore().kinds())).length > 0;
}
