/**
 * Draining the audit webhook's spool (spool.ts; on PostgreSQL its table, webhook-spool.ts), oldest batch first, into
 * the store: each batch through its cluster's ingester in one transaction, its file (or row) removed only after that
 * transaction committed. A crash in between leaves it, and the batch read again adds nothing (a request is stored
 * once by its auditID and stage). The ingesters are kept between batches, one per cluster posting lately, for the versions memory holds of
 * objects (the API server posts batches concurrently: one can arrive after a later one); the store has the rest.
 */
import { createHash } from "node:crypto";
import { readFileSync, renameSync, mkdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { Profile } from "../churn/profiles";
import type { WriteStore } from "../store/store";
import { eventsOf } from "./event";
import { AuditIngester } from "./ingest";
import { parseSpoolName, spooledBatches, spoolName } from "./spool";

const KEPT_CLUSTERS = 4;
/** bodies of recently written objects each cluster's ingester keeps: a few seconds of a busy cluster's writes */
const RECENT_BYTES = 16 * 1024 * 1024;

/** One spooled batch, wherever it is kept: a file in the spool directory, or a row of the spool's table. */
export interface SpooledBatch {
  name: string;
  cluster: string;
  read(): Promise<Buffer>;
  /** stored: removed from the spool */
  done(): Promise<void>;
  /** unreadable: kept aside under `failed/`, never read again */
  failed(body: Buffer): Promise<void>;
}

/** Where the drain takes batches from, oldest first. */
export type SpoolSource = () => Promise<SpooledBatch[]>;

/** The spool's files in `dir` (one process's spool, spool.ts). */
export function fileSpool(dir: string): SpoolSource {
  return async () =>
    spooledBatches(dir).map((name) => ({
      name,
      cluster: parseSpoolName(name)!.cluster,
      read: async () => readFileSync(join(dir, name)),
      done: async () => rmSync(join(dir, name)),
      failed: async () => {
        mkdirSync(join(dir, "failed"), { recursive: true });
        renameSync(join(dir, name), join(dir, "failed", name));
      },
    }));
}

/** The spool's table in the store's database, which every replica writes (webhook-spool.ts); unreadable batches go to `failedDir`. */
export function tableSpool(store: WriteStore, failedDir: string): SpoolSource {
  return async () =>
    (await store.webhookSpool().oldest(100)).map((row) => {
      const name = spoolName(row.id, row.cluster);
      return {
        name,
        cluster: row.cluster,
        read: async () => Buffer.from(row.body),
        done: () => store.webhookSpool().remove(row.id),
        failed: async (body: Buffer) => {
          mkdirSync(failedDir, { recursive: true });
          writeFileSync(join(failedDir, name), body);
          await store.webhookSpool().remove(row.id);
        },
      };
    });
}

export interface DrainedBatch {
  name: string;
  cluster: string;
  bytes: number;
  /** what was stored, in the ingest summary's words */
  summary: string;
  /** set when the batch could not be read: it was moved to `failed/` */
  error?: string;
}

export class SpoolDrain {
  private readonly ingesters = new Map<string, AuditIngester>();

  constructor(
    private readonly source: SpoolSource,
    private readonly store: WriteStore,
    private readonly profiles: Profile[],
    private readonly retentionMs: number,
    private readonly guard?: () => Promise<void>,
  ) {}

  private async ingesterFor(cluster: string): Promise<AuditIngester> {
    let ingester = this.ingesters.get(cluster);
    this.ingesters.delete(cluster);
    if (ingester) await ingester.newRun();
    else ingester = new AuditIngester(this.store, cluster, this.profiles, RECENT_BYTES, this.guard);
    this.ingesters.set(cluster, ingester);
    while (this.ingesters.size > KEPT_CLUSTERS) this.ingesters.delete(this.ingesters.keys().next().value!);
    return ingester;
  }

  /** Drains what is spooled now; answers each batch it took. */
  async drainAll(onBatch: (batch: DrainedBatch) => void): Promise<number> {
    let drained = 0;
    for (const batch of await this.source()) {
      onBatch(await this.drainOne(batch));
      drained++;
    }
    return drained;
  }

  private async drainOne(batch: SpooledBatch): Promise<DrainedBatch> {
    const { name, cluster } = batch;
    const body = await batch.read();
    let events;
    try {
      events = eventsOf(JSON.parse(body.toString("utf8")));
      if (events === null) throw new Error("not an audit EventList");
    } catch (error) {
      // Checked before it was spooled, so only a damaged disk gets here: kept aside, never read again.
      await batch.failed(body);
      return { name, cluster, bytes: body.length, summary: "", error: (error as Error).message };
    }
    const ingester = await this.ingesterFor(cluster);
    ingester.pruned = await this.store.pruneIfDue(this.retentionMs);
    // A batch the API server sent twice (its answer was lost), or read again after a crash, adds no count twice.
    await ingester.beginSource(`webhook:${createHash("sha256").update(body).digest("hex")}`);
    ingester.events(events, "webhook");
    await ingester.flush();
    await batch.done();
    return { name, cluster, bytes: body.length, summary: ingester.summary() };
  }
}
