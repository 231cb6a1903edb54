/**
 * The audit webhook's spool with its drain thread, one per process: what the webhook accepts is written here, and
 * the thread, told of each batch, takes it into the store. Its counts are what /metrics says of the spool.
 */
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import type { Profile } from "../churn/profiles";
import { perProcess } from "../runtime/per-process";
import { runService } from "../runtime/threads";
import { AuditSpool } from "./spool";
import type { DrainedBatch } from "./spool-drain";

export interface SpoolService {
  spool: AuditSpool;
  /** batches taken into the store, and those that could not be read (kept aside under failed/) since start */
  drained: number;
  failed: number;
  /** Writes a batch durably and wakes the drain (429 when the spool is full). */
  accept(cluster: string, body: Buffer): Promise<{ batches: number; bytes: number }>;
}

export interface SpoolSettings {
  dataDir: string;
  maxBytes: number;
  profiles: Profile[];
  retentionMs: number;
}

/** The process's spool, started on first use (at start, after the live store opened: the thread opens it too). */
export function spoolService(settings: SpoolSettings): SpoolService {
  return perProcess("auditSpool", () => {
    const dir = join(settings.dataDir, "audit-spool");
    const spool = new AuditSpool(dir, settings.maxBytes);
    // Turbopack bundles the thread's entry (`new URL(…)`), written out where it is started.
    const thread = new Worker(new URL("./spool-worker.ts", import.meta.url), {
      workerData: { dir, storePath: join(settings.dataDir, "churnscope.sqlite"), profiles: settings.profiles, retentionMs: settings.retentionMs },
    });
    const service: SpoolService = {
      spool,
      drained: 0,
      failed: 0,
      async accept(cluster, body) {
        const queued = await spool.accept(cluster, body);
        thread.postMessage("spooled");
        return queued;
      },
    };
    runService<DrainedBatch>(thread, "audit spool", {
      onProgress: (batch) => {
        spool.drained(batch.bytes);
        if (batch.error) {
          service.failed++;
          console.error(`churnscope: audit spool: ${batch.name} could not be read (${batch.error}); kept under audit-spool/failed/`);
        } else service.drained++;
      },
    });
    return service;
  });
}
