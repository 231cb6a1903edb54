/**
 * The one version chain every writer of object writes goes through (the watch recorder, audit
 * ingest, snapshot import): each object's last version, kept in memory for the objects written
 * recently and read from the store on a miss, saved once at the end of a batch's transaction and
 * forgotten if that transaction fails, so memory never says more than the store.
 */
import type { WriteClass } from "../churn/analyze";
import type { Json } from "../churn/json";
import { objectKeyText as idOf } from "../objects/key";
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
  /** Versions set by the batch comparing now, not yet handed to its transaction. */
  private unsaved = new Map<string, { key: ObjectKey; value: V }>();
  /** Each batch's versions from the end of its comparing until its transaction ends, oldest first. */
  private readonly storing: Map<string, { key: ObjectKey; value: V }>[] = [];

  constructor(private readonly tier: ChainTier<V>) {}

  /** The object's last version: from memory, else from the store (and then kept in memory). */
  async get(key: ObjectKey): Promise<V | undefined> {
    const id = idOf(key);
    const hit = this.recent.get(id);
    if (hit) return hit.value;
    // Set by a batch whose transaction has not ended, but no longer in memory: the store does not have it yet.
    const pending = this.unsaved.get(id) ?? this.storing.findLast((versions) => versions.has(id))?.get(id);
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

  /** Where the next batch's comparing waits: the end of this one's `before`, or of the whole batch if it has none. */
  private comparingTurn: Promise<unknown> = Promise.resolve();
  /** Where the next batch's transaction waits: the end of this one's. */
  private storingTurn: Promise<unknown> = Promise.resolve();
  /** Failed batches so far, and the last one's error. */
  private failures = 0;
  private lastFailure: unknown;

  /**
   * `work` in one transaction, the last versions the batch set saved at its end. `before`: the batch's comparing, outside
   * the transaction, its answer handed to `work`. Batches compare in turn and store in turn, and a batch's comparing may
   * run while the batch before it stores: that is what keeps a database on another core busy.
   *
   * When a batch fails, memory forgets what it held, and every batch asked for before the failure and not yet stored
   * fails with the same error (it may have compared against what was just forgotten), so batches are never stored out of
   * the order they were asked for.
   */
  batch<T, P = undefined>(store: Transactional, work: (prepared: P) => Promise<T>, timesMs?: readonly number[], before?: () => Promise<P>): Promise<T> {
    type Compared = { prepared: P; versions: Map<string, { key: ObjectKey; value: V }> };
    const askedAfter = this.failures;
    const current = () => {
      if (this.failures !== askedAfter) throw this.lastFailure;
    };
    const compare = async (): Promise<Compared> => {
      current();
      try {
        const prepared = (await before?.()) as P;
        current();
        return { prepared, versions: this.handOver() };
      } catch (error) {
        // What it set may rest on versions just forgotten: nobody else compares now, so memory starts again from the store.
        // (Batches before it may still be storing: their versions stay until their transactions end.)
        if (this.failures === askedAfter) this.failed(error);
        else this.forget();
        throw error;
      }
    };
    const store1 = async ({ prepared, versions }: Compared) => {
      try {
        current();
        return await store.batch(async () => {
          const result = await work(prepared);
          // Without `before`, the batch sets its versions in its transaction, and no other batch compares meanwhile.
          if (!before) for (const [id, entry] of this.unsaved) versions.set(id, entry);
          for (const { key, value } of versions.values()) await this.tier.write(key, value);
          return result;
        }, timesMs);
      } catch (error) {
        // A batch that fails because an earlier one did forgets nothing more: a later batch may be comparing by now.
        if (this.failures === askedAfter) {
          this.failed(error);
          // Every batch after it compared against its versions, and fails too.
          this.storing.length = 0;
        }
        throw error;
      } finally {
        const at = this.storing.indexOf(versions);
        if (at >= 0) this.storing.splice(at, 1);
        if (!before) this.unsaved.clear();
      }
    };
    const compared = this.comparingTurn.then(compare, compare);
    const result = Promise.all([compared, this.storingTurn]).then(([c]) => store1(c));
    this.comparingTurn = (before ? compared : result).catch(() => undefined);
    this.storingTurn = result.catch(() => undefined);
    return result;
  }

  /** A batch failed: every batch asked for before now fails with its error, and memory forgets all it held. */
  private failed(error: unknown): void {
    this.failures++;
    this.lastFailure = error;
    this.forget();
  }

  private forget(): void {
    this.unsaved.clear();
    this.recent.clear();
    this.used = 0;
  }

  /** The versions the batch comparing now set, held from here until its transaction ends. */
  private handOver(): Map<string, { key: ObjectKey; value: V }> {
    const versions = this.unsaved;
    this.unsaved = new Map();
    this.storing.push(versions);
    return versions;
  }
}

/** The body a write keeps: the object as created, or as last seen before its delete; no other write keeps one. */
export function keptBody(cls: WriteClass, before: Json | undefined, after: Json | undefined): Json | undefined {
  return cls === "create" ? after : cls === "delete" ? before : undefined;
}
