/**
 * The dashboard records in-process when there is something to record (clusters in the config, or
 * a kubeconfig / in-cluster service account), into the same live store the object views read.
 */
import { liveStore } from "../objects/sources";
import { clustersToRecord, startRecorder, type Recorder } from "../recorder/recorder";
import type { ServerContext } from "./context";

const key = Symbol.for("churnscope.recorder");
type Holder = { [key]?: Recorder | null };

export function ensureRecorder(ctx: ServerContext): Recorder | null {
  const holder = globalThis as Holder;
  if (holder[key] === undefined) {
    const clusters = clustersToRecord(ctx.config);
    holder[key] = clusters.length === 0 ? null : startRecorder(ctx.config, liveStore(ctx), clusters, (line) => console.log(`churnscope: ${line}`), false);
    if (holder[key]) console.log(`churnscope: recording ${clusters.map((c) => c.name).join(", ")}`);
  }
  return holder[key] ?? null;
}

export function runningRecorder(): Recorder | null {
  return (globalThis as Holder)[key] ?? null;
}
