/**
 * The dashboard records in-process when there is something to record (clusters in the config, or
 * a kubeconfig / in-cluster service account), into the same live store the object views read.
 */
import { liveStore } from "../store/sources";
import { clustersToRecord, startRecorder, type Recorder } from "../recorder/recorder";
import type { ServerContext } from "./context";
import { perProcess } from "../runtime/per-process";

/** The process's recorder: unset until first asked for, null when there is nothing to record. */
const slot = () => perProcess<{ recorder?: Recorder | null }>("recorder", () => ({}));

export function ensureRecorder(ctx: ServerContext): Recorder | null {
  const held = slot();
  if (held.recorder === undefined) {
    const clusters = clustersToRecord(ctx.config);
    held.recorder = clusters.length === 0 ? null : startRecorder(ctx.config, liveStore(ctx), clusters, (line) => console.log(`churnscope: ${line}`), false);
    if (held.recorder) console.log(`churnscope: recording ${clusters.map((c) => c.name).join(", ")}`);
  }
  return held.recorder;
}

export function runningRecorder(): Recorder | null {
  return slot().recorder ?? null;
}

/** Whether the object views have live data to show: a recorder runs here, or something (a recorder, ingested audit logs) filled the store. */
export function hasLiveObjects(ctx: ServerContext): boolean {
  return runningRecorder() !== null || liveStore(ctx).kinds().length > 0;
}
