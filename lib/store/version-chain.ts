/**
 * The one version chain every writer of object writes goes through (the watch recorder, audit
 * ingest, snapshot import): each object's last version, kept in memory for the objects written
 * recently and read from the store on a miss, saved once at the end of a batch's transaction and
 * forgotten if that transaction fails. Memory says more than the store only of batches not yet stored,
 * and a batch compared against one that then fails is not stored either.
 */
import type { WriteClass } from "../churn/write-class";
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

/** A batch's own record of the last versions it set: saved when its transaction ends. */
interface BatchVersions<V> {
  unsaved: Map<string, { key: ObjectKey; value: V }>;
  /** an earlier batch failed after this one was compared against what that one had set: it must not be stored */
  stale: boolean;
}

export class VersionChain<V> {
  private readonly recent = new Map<string, { value: V; weight: number }>();
  private used = 0;
  /** batches asked for and not ended, oldest first: what memory says of them is not in the store yet */
  private readonly open: BatchVersions<V>[] = [];
  /** the batch whose comparing (or whole work, for one without a comparing step) runs now: where `set` records */
  private setting: BatchVersions<V> | undefined;

  constructor(private readonly tier: ChainTier<V>) {}

  /** The object's last version: from memory, else from the store (and then kept in memory). */
  async get(key: ObjectKey): Promise<V | undefined> {
    const id = idOf(key);
    const hit = this.recent.get(id);
    if (hit) return hit.value;
    // Set by a batch not yet stored but no longer in memory: the store is told only when that batch ends.
    for (let at = this.open.length - 1; at >= 0; at--) {
      const pending = this.open[at].unsaved.get(id);
      if (pending) return pending.value;
    }
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

  /** The object's new last version: kept, and saved when its batch ends (once, however often it was written). */
  set(key: ObjectKey, value: V): void {
    const batch = this.setting;
    if (!batch) throw new Error("a last version set outside a batch would never be saved");
    this.keep(key, value);
    const id = idOf(key);
    if (batch.unsaved.get(id)?.value !== value) batch.unsaved.set(id, { key, value });
  }

  /** Comparing steps, one at a time in order; a batch without one holds this turn for its whole work. */
  private readonly comparing = new Turns();
  /** Transactions, one at a time in order. */
  private readonly storing = new Turns();

  /**
   * `work` in one transaction, the last versions its batch set saved at its end; batches end in the order asked for. On
   * failure memory forgets what it held, and every batch compared against what this one set fails too.
   * `before`: the batch's comparing step, outside the transaction, its answer handed to `work` (what it sets is saved
   * with the rest). It runs once the batch before has been compared, not stored: a burst is compared while the one
   * before it is stored (on PostgreSQL, while the server works). `work` must then set nothing.
   * Without `before`, `work` may set: the batch waits for every batch before it to end, and the next for it.
   */
  batch<T, P = undefined>(store: Transactional, work: (prepared: P) => Promise<T>, timesMs?: readonly number[], before?: () => Promise<P>): Promise<T> {
    const batch: BatchVersions<V> = { unsaved: new Map(), stale: false };
    const stored = (prepared: P) =>
      this.failing(batch, () => {
        if (batch.stale) throw new Error("an earlier batch failed after this one was compared against what it set");
        return store.batch(async () => {
          const result = await work(prepared);
          for (const { key, value } of batch.unsaved.values()) await this.tier.write(key, value);
          return result;
        }, timesMs);
      });
    // Both turns are asked for now, so that each holds the batches in the order they were asked for.
    if (!before) {
      const comparingTurn = this.comparing.hold();
      return this.storing.run(async () => {
        await comparingTurn.entered;
        try {
          return await this.recording(batch, () => stored(undefined as P));
        } finally {
          comparingTurn.release();
        }
      });
    }
    // Until its transaction ends, what it set is open: `get` answers it, and it goes stale if an earlier batch fails.
    const compared = this.comparing.run(() => this.recording(batch, () => this.failing(batch, before, true)));
    // A failed comparing step is this batch's answer, given in its storing turn.
    compared.catch(() => undefined);
    return this.storing.run(async () => stored(await compared));
  }

  /** `work` with `set` recording into `batch`, which is open from now on. */
  private async recording<T>(batch: BatchVersions<V>, work: () => Promise<T>): Promise<T> {
    this.open.push(batch);
    this.setting = batch;
    try {
      return await work();
    } finally {
      this.setting = undefined;
    }
  }

  /** `work`, after which `batch` is closed (unless `staysOpen` and it succeeded); on failure memory forgets. */
  private async failing<T>(batch: BatchVersions<V>, work: () => Promise<T>, staysOpen = false): Promise<T> {
    let ended = !staysOpen;
    try {
      return await work();
    } catch (error) {
      ended = true;
      this.forget(batch);
      throw error;
    } finally {
      if (ended) this.open.splice(this.open.indexOf(batch), 1);
    }
  }

  /** `failed` failed: memory holds what the store may not, and the batches after it, compared against it, must not be stored. */
  private forget(failed: BatchVersions<V>): void {
    this.recent.clear();
    this.used = 0;
    for (const later of this.open.slice(this.open.indexOf(failed) + 1)) later.stale = true;
  }
}

/** The body a write keeps: the object as created, or as last seen before its delete; no other write keeps one. */
export function keptBody(cls: WriteClass, before: Json | undefined, after: Json | undefined): Json | undefined {
  return cls === "create" ? after : cls === "delete" ? before : undefined;
}
