/**
 * A watch's bursts on their way to the store, in the order they arrived. Each burst is handed to the recorder as soon
 * as it arrives, so it is compared while the burst before it is being stored (on PostgreSQL, by another process on
 * another core). A burst the recorder refuses for one of its events is stored again event by event, that one skipped
 * and counted; a store that refuses, or a lease lost, ends the queue.
 */
import { isStoreError } from "../runtime/store-error";
import { LeaseLost } from "../store/leases";
import type { KubeObject } from "./core";

/** Watch events waiting to be stored, at most: past it the watch ends and resumes from the last version stored (100 k events of a few KiB). */
const MAX_QUEUED_EVENTS = 100_000;

export type WatchEvent = { type: string; obj: KubeObject; tsMs: number };

export interface BurstStats {
  stored: number;
  rejected: number;
  error?: string;
}

export class BurstQueue {
  /** Settles when every burst and task queued so far has. */
  private settled: Promise<void> = Promise.resolve();
  private queuedEvents = 0;
  /** Bursts handed to the recorder before their turn, not yet settled. */
  private early = 0;
  /** Bursts and tasks to be handed over in their turn, not yet settled: nothing may be handed over early before them. */
  private inTurnOnly = 0;
  /** A burst failed: until the bursts handed over before it settle, none is handed over early. */
  private recovering = false;
  private failure: unknown;

  constructor(
    private readonly recorder: { applyEvents(events: WatchEvent[]): Promise<number> },
    private readonly stats: BurstStats,
    /** Told once why the queue ended, when what was handed over before has settled: the watch resumes from the store after it. */
    private readonly onFail: (error: unknown) => void,
  ) {}

  /** Queues a burst; resolves once it (and everything before it) is stored or skipped. */
  add(burst: WatchEvent[]): Promise<void> {
    if (burst.length === 0 || this.failure) return this.settled;
    if (this.queuedEvents + burst.length > MAX_QUEUED_EVENTS) {
      this.fail(new Error(`the store fell ${this.queuedEvents + burst.length} events behind the watch`));
      return this.settled;
    }
    this.queuedEvents += burst.length;
    const early = this.recovering || this.inTurnOnly > 0 ? undefined : this.recorder.applyEvents(burst);
    if (early) {
      this.early++;
      // Settled in its turn. A refusal is known at once, though, and nothing arriving from now on may be handed over before
      // this burst is stored again.
      early.catch(() => (this.recovering = true));
    } else this.inTurnOnly++;
    const settle = () => this.settle(burst, early);
    this.settled = this.settled.then(settle);
    return this.settled;
  }

  /** Work that follows every burst queued before it and comes before every burst after it (a streaming list's objects). */
  inTurn(task: () => Promise<void>): Promise<void> {
    this.inTurnOnly++;
    this.settled = this.settled.then(async () => {
      try {
        if (!this.failure) await task();
      } catch (error) {
        this.fail(error);
      } finally {
        this.inTurnOnly--;
      }
    });
    return this.settled;
  }

  /** Ends the queue: what is queued after now is not stored. */
  fail(error: unknown): void {
    if (this.failure) return;
    this.failure = error;
    this.settled = this.settled.then(() => this.onFail(error));
  }

  private async settle(burst: WatchEvent[], early: Promise<number> | undefined): Promise<void> {
    try {
      if (this.failure) {
        // Handed over already: it stores or fails in its turn, before the next watch reads where to resume from.
        await early?.catch(() => undefined);
        return;
      }
      try {
        this.stats.stored += await (early ?? this.recorder.applyEvents(burst));
      } catch (error) {
        if (fatal(error)) return this.fail(error);
        // The bursts handed over after it fail too (the version chain keeps them in order): each is stored again in turn.
        for (const event of burst) {
          try {
            this.stats.stored += await this.recorder.applyEvents([event]);
          } catch (eventError) {
            if (fatal(eventError)) return this.fail(eventError);
            this.stats.rejected++;
            this.stats.error = `skipped a watch event: ${(eventError as Error).message}`;
          }
        }
      }
    } finally {
      this.queuedEvents -= burst.length;
      if (early) this.early--;
      else this.inTurnOnly--;
      if (this.early === 0) this.recovering = false;
    }
  }
}

/** The store refused, or this process no longer records the cluster: nothing after it may be stored. */
function fatal(error: unknown): boolean {
  return isStoreError(error) || error instanceof LeaseLost;
}
