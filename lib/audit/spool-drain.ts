/**
 * Draining the audit webhook's spool (spool.ts), oldest batch first, into the store: each batch through its
 * cluster's ingester in one transaction, its file removed only after that transaction committed. A crash in
 * between leaves the file, and the batch read again adds nothing (a request is stored once by its auditID and
 * stage). The ingesters are kept between batches, one per cluster posting lately, for the versions memory holds of
 * objects (the API server posts batches concurrently: one can arrive after a later one); the store has the rest.
 */
import { readFileSync, renameSync, mkdirSync, rmSync } from "node:fs";
import { join } from "node:path";
import type { Profile } from "../churn/profiles";
import type { WriteStore } from "../store/store";
import { eventsOf } from "./event";
import { AuditIngester } from "./ingest";
import { parseSpoolName, spooledBatches } from "./spool";

const KEPT_CLUSTERS = 4;
/** bodies of recently written objects each cluster's ingester keeps: a few seconds of a busy cluster's writes */
const RECENT_BYTES = 16 * 1024 * 1024;

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
    private readonly dir: string,
    private readonly store: WriteStore,
    private readonly profiles: Profile[],
    private readonly retentionMs: number,
  ) {}

  private ingesterFor(cluster: string): AuditIngester {
    let ingester = this.ingesters.get(cluster);
    this.ingesters.delete(cluster);
    if (ingester) ingester.newRun();
    else ingester = new AuditIngester(this.store, cluster, this.profiles, RECENT_BYTES);
    this.ingesters.set(cluster, ingester);
    while (this.ingesters.size > KEPT_CLUSTERS) this.ingesters.delete(this.ingesters.keys().next().value!);
    return ingester;
  }

  /** Drains what is spooled now; answers each batch it took. */
  drainAll(onBatch: (batch: DrainedBatch) => void): number {
    let drained = 0;
    for (const name of spooledBatches(this.dir)) {
      onBatch(this.drainOne(name));
      drained++;
    }
    return drained;
  }

  private drainOne(name: string): DrainedBatch {
    const path = join(this.dir, name);
    const { cluster } = parseSpoolName(name)!;
    const body = readFileSync(path);
    let events;
    try {
      events = eventsOf(JSON.parse(body.toString("utf8")));
      if (events === null) throw new Error("not an audit EventList");
    } catch (error) {
      // Checked before it was spooled, so only a damaged disk gets here: kept aside, never read again.
      mkdirSync(join(this.dir, "failed"), { recursive: true });
      renameSync(path, join(this.dir, "failed", name));
      return { name, cluster, bytes: body.length, summary: "", error: (error as Error).message };
    }
    const ingester = this.ingesterFor(cluster);
    ingester.pruned = this.store.pruneIfDue(this.retentionMs);
    ingester.events(events, "webhook");
    ingester.flush();
    rmSync(path);
    return { name, cluster, bytes: body.length, summary: ingester.summary() };
  }
}
