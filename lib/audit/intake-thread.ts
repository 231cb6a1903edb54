/**
 * The audit intake thread, one per process, on its own connection to the live store: it drains what the webhook
 * spooled (told of each batch) and polls the configured buckets, so that neither the webhook's next answer nor a
 * probe waits behind classifying. Its counts are what /metrics says of the spool; the buckets' own record is in the
 * store.
 */
import { join } from "node:path";
import { Worker } from "node:worker_threads";
import type { Profile } from "../churn/profiles";
import type { AuditSourceConfig } from "../config/load";
import { perProcess } from "../runtime/per-process";
import { runService } from "../runtime/threads";
import type { StoreTarget } from "../store/database";
import type { IntakeProgress } from "./intake-worker";
import type { WebhookSpoolTable } from "../store/webhook-spool";
import { AuditSpool, SpoolFullError } from "./spool";

function acceptingIntoFiles(files: AuditSpool): WebhookSpool {
  return { accept: (cluster, body) => files.accept(cluster, body), queued: async () => files.queued };
}

/** Past the bound, refused as the files refuse it: 429, which the API server's webhook backend retries. */
function acceptingIntoTable(table: WebhookSpoolTable, maxBytes: number): WebhookSpool {
  return {
    async accept(cluster, body) {
      const { accepted, ...held } = await table.accept(cluster, body, maxBytes);
      if (!accepted) throw new SpoolFullError(held);
      return held;
    },
    queued: () => table.queued(),
  };
}

/** Where accepted webhook batches wait: one process's files, or the table replicas share on PostgreSQL. */
export interface WebhookSpool {
  accept(cluster: string, body: Buffer): Promise<{ batches: number; bytes: number }>;
  queued(): Promise<{ batches: number; bytes: number }>;
}

export interface AuditIntake {
  spool: WebhookSpool;
  /** batches taken into the store, and those that could not be read (kept aside under failed/) since start */
  drained: number;
  failed: number;
  /** Writes a batch durably and wakes the drain (429 when the spool is full). */
  accept(cluster: string, body: Buffer): Promise<{ batches: number; bytes: number }>;
}

export interface IntakeSettings {
  dataDir: string;
  /** the live store, which the thread opens too */
  store: StoreTarget;
  /** on PostgreSQL: the spool's table, in the live store this thread holds open */
  table?: WebhookSpoolTable;
  maxSpoolBytes: number;
  profiles: Profile[];
  retentionMs: number;
  sources: AuditSourceConfig[];
}

/** The process's intake thread, started on first use (at start, after the live store opened: the thread opens it too). */
export function auditIntake(settings: IntakeSettings): AuditIntake {
  return perProcess("auditIntake", () => {
    const dir = join(settings.dataDir, "audit-spool");
    const files = settings.table ? undefined : new AuditSpool(dir, settings.maxSpoolBytes);
    const spool = settings.table ? acceptingIntoTable(settings.table, settings.maxSpoolBytes) : acceptingIntoFiles(files!);
    // Turbopack bundles the thread's entry (`new URL(…)`), written out where it is started.
    const thread = new Worker(new URL("./intake-worker.ts", import.meta.url), {
      workerData: {
        dir,
        store: settings.store,
        profiles: settings.profiles,
        retentionMs: settings.retentionMs,
        sources: settings.sources,
      },
    });
    const intake: AuditIntake = {
      spool,
      drained: 0,
      failed: 0,
      async accept(cluster, body) {
        const queued = await spool.accept(cluster, body);
        thread.postMessage("spooled");
        return queued;
      },
    };
    const lastErrors = new Map<string, string | undefined>();
    runService<IntakeProgress>(thread, "audit intake", {
      onProgress: (progress) => {
        if ("poll" in progress) {
          // Said in the log when it changes, not at every poll.
          const { source, error, read, bytes } = progress.poll;
          if (error && error !== lastErrors.get(source)) console.error(`churnscope: audit source ${source}: ${error}`);
          if (!error && lastErrors.get(source)) console.log(`churnscope: audit source ${source}: reading again`);
          if (read > 0) console.log(`churnscope: audit source ${source}: read ${read} object${read === 1 ? "" : "s"} (${bytes} bytes)`);
          lastErrors.set(source, error);
          return;
        }
        const batch = progress.batch;
        files?.drained(batch.bytes);
        if (batch.error) {
          intake.failed++;
          console.error(`churnscope: audit spool: ${batch.name} could not be read (${batch.error}); kept under audit-spool/failed/`);
        } else intake.drained++;
      },
    });
    return intake;
  });
}
