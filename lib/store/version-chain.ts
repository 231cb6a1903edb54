/**
 * The one version chain every writer of object writes goes through (the watch recorder, audit
 * ingest, snapshot import): each object's last version, kept in memory for the objects written
 * recently and read from the store on a miss, saved once at the end of a batch's transaction and
 * forgotten if that transaction fails, so memory never says more than the store.
 */
import type { WriteClass } from "../churn/analyze";
import type { Json } from "../churn/json";
import { objectKeyText as idOf } from "../objects/key";
import { Turns } from "../runtime/turns";
import type { ObjectKey } from "../wire/objects";

export interface ChainTier<V> {
  /** the persisted last version, read on a miss */
  read(key: ObjectKey): Promise<V | undefined>;
  /** saves a last version, inside the batch's transaction */
  write(key: ObjectKey, value: V): Promise<void>;
  /** how much of `capacity` an entry takes: 1 to count objects, its bytes to count memory */
  weigh(value: V): number;
  capacity: number;
}

/** What a batch needs of the store: one transaction around its work. */
export interface Transactional {
  batch<T>(work: () => Promise<T>, timesMs?: readonly number[]): Promise<T>;
}

export class VersionChain<V> {
  private readonly recent = new Map<string, { value: V; weight: number }>();
  private used = 0;
  private readonly unsaved = new Map<string, { key: ObjectKey; value: V }>();

  constructor(private readonly tier: ChainTier<V>) {}

  /** The object's last version: from memory, else from the store (and then kept in memory). */
  async get(key: ObjectKey): Promise<V | undefined> {
    const id = idOf(key);
    const hit = this.recent.get(id);
    if (hit) return hit.value;
    // Set in this batch but no longer in memory: the store is told only when the batch ends.
    const pending = this.unsaved.get(id);
    if (pending) return pending.value;
    const value = await this.tier.read(key);
    if (value !== undefined) this.keep(key, value);
    return value;
  }

  /** Kept in memory only: what the store must not be told (a version older than the one it has). */
  keep(key: ObjectKey, value: V): void {
    const id = idOf(key);
    const held = this.recent.get(id);
    this.used -= held?.weight ?? 0;
    this.recent.delete(id);
    const weight = this.tier.weigh(value);
    // The same value again (changed in place) keeps its entry: entries live long, and replacing them churns the heap.
    const entry = held?.value === value ? held : { value, weight };
    entry.weight = weight;
    this.recent.set(id, entry);
    this.used += weight;
    // The newest entry stays, however large: it is what the next write to its object is compared with.
    while (this.used > this.tier.capacity && this.recent.size > 1) {
      const [oldest, entry] = this.recent.entries().next().value as [string, { weight: number }];
      this.recent.delete(oldest);
      this.used -= entry.weight;
    }
  }

  /** The object's new last version: kept, and saved when the batch ends (once, however often it was written). */
  set(key: ObjectKey, value: V): void {
    this.keep(key, value);
    const id = idOf(key);
    if (this.unsaved.get(id)?.value !== value) this.unsaved.set(id, { key, value });
  }

  /** One chain's batches never interleave: each waits for the one before. */
  private readonly turns = new Turns();

  /**
   * `work` in one transaction, the last versions it set saved at its end; on failure memory forgets what it held.
   * `before`: work in the batch's turn that comes first, outside the transaction, its answer handed to `work` (what it
   * sets is saved with the rest).
   */
  batch<T, P = undefined>(store: Transactional, work: (prepared: P) => Promise<T>, timesMs?: readonly number[], before?: () => Promise<P>): Promise<T> {
    const run = async () => {
      try {
        const prepared = (await before?.()) as P;
        return await store.batch(async () => {
          const result = await work(prepared);
          for (const { key, value } of this.unsaved.values()) await this.tier.write(key, value);
          return result;
        }, timesMs);
      } catch (error) {
        this.recent.clear();
        this.used = 0;
        throw error;
      } finally {
        this.unsaved.clear();
      }
    };
    return this.turns.run(run);
  }
}

/** The body a write keeps: the object as created, or as last seen before its delete; no other write keeps one. */
export function keptBody(cls: WriteClass, before: Json | undefined, after: Json | undefined): Json | undefined {
  return cls === "create" ? after : cls === "delete" ? before : undefined;
}
