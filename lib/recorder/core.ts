/**
 * The recorder's pure core for one profile on one cluster: turns a list and the watch events that
 * follow into stored writes, against the last version stored for each object. A version already
 * stored (same resourceVersion) is never stored twice, and a relist reconciles: objects missing
 * from the list are recorded as deleted, changed ones as written. Time comes from the caller.
 */
import { analyzeVersions, prepare, project, type Version } from "../churn/analyze";
import { baselineOf } from "../churn/changes";
import type { Json } from "../churn/json";
import { profileFor, type Profile } from "../churn/profiles";
import { clusterScope } from "../churn/scope";
import type { WriteRepository } from "../store/types";
import { keptBody, VersionChain } from "../store/version-chain";
import type { ObjectKey, StoredWrite } from "../wire/objects";

export interface KubeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

/** An object the recorder can key: a mapping whose metadata has a name (and a namespace, if any, as text). */
export function namedObject(obj: unknown): obj is KubeObject {
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) return false;
  const meta = (obj as KubeObject).metadata;
  return (
    typeof meta === "object" &&
    meta !== null &&
    typeof meta.name === "string" &&
    meta.name !== "" &&
    (meta.namespace === undefined || typeof meta.namespace === "string")
  );
}

/**
 * Whether a watch event can be recorded: an object change (a named object with a resourceVersion),
 * or a bookmark with its resourceVersion. Anything else (a null object, a nameless one, an unknown
 * type, say from a proxy that mangles the stream) is skipped and counted, never stored as an object.
 */
export function readableEvent(type: string, obj: unknown): obj is KubeObject {
  const version = (obj as KubeObject | null)?.metadata?.resourceVersion;
  if (typeof obj !== "object" || obj === null || typeof version !== "string" || version === "") return false;
  if (type === "BOOKMARK") return true;
  return (type === "ADDED" || type === "MODIFIED" || type === "DELETED") && namedObject(obj);
}

/** The resource a set of profiles reads (several profiles may read one resource, e.g. Connector project-side and hub copies). */
export function resourceKey(profile: Profile): string {
  return profile.group ? `${profile.resource}.${profile.group}` : profile.resource;
}

/** How many objects' last versions a recorder keeps in memory (a few KB each, twice: as sent and normalised). */
const RECENT_OBJECTS = 5_000;

/** An object's last version as the server sent it (null: deleted), prepared for its profile when first compared with. */
interface LastVersion {
  resourceVersion: string;
  obj: Json | null;
  version?: Version;
}

export class ProfileRecorder {
  private readonly sample: Profile;
  /** the server sends cluster-scoped objects without a namespace; this keeps them so should one carry it */
  private readonly clusterScoped: boolean;

  /**
   * `profiles` all read the same resource; each object is read with the one that fits it (profileFor). `guard` runs
   * first in each transaction and throws when this process may no longer record the cluster (its lease, leases.ts).
   */
  constructor(
    private readonly store: WriteRepository,
    private readonly cluster: string,
    private readonly profiles: Profile[],
    private readonly guard: () => Promise<void> = () => Promise.resolve(),
  ) {
    this.sample = profiles[0];
    this.clusterScoped = clusterScope(profiles)(this.sample.group, this.sample.resource);
    this.chain = new VersionChain<LastVersion>({
      read: async (key) => {
        const row = await store.latest(key);
        return row && { resourceVersion: row.resourceVersion, obj: row.body === null ? null : (JSON.parse(row.body) as Json) };
      },
      write: (key, last) => store.setLatest(key, last.resourceVersion, last.obj === null ? null : JSON.stringify(last.obj)),
      weigh: () => 1,
      capacity: RECENT_OBJECTS,
    });
  }

  private key(obj: KubeObject): ObjectKey {
    return {
      cluster: this.cluster,
      group: this.sample.group,
      kind: this.sample.kind,
      namespace: this.clusterScoped ? "" : (obj.metadata?.namespace ?? ""),
      name: obj.metadata?.name ?? "",
    };
  }

  private profileOf(obj: KubeObject | undefined): Profile {
    return profileFor(this.profiles, this.sample.group, this.sample.kind, this.cluster, obj?.metadata?.labels) ?? this.sample;
  }

  private resumeKey(): string {
    return `resume/${this.cluster}/${resourceKey(this.sample)}`;
  }

  /** Where a watch can continue from, if the store knows. */
  resumeVersion(): Promise<string | undefined> {
    return this.store.getMeta(this.resumeKey());
  }

  /**
   * Until when this resource was last known to be observed (the last list, event batch, or clean
   * stop): where a period the recorder could not observe starts, even when it ran in an earlier process.
   */
  async observedUntilMs(): Promise<number | undefined> {
    const value = Number(await this.store.getMeta(`observed/${this.cluster}/${resourceKey(this.sample)}`));
    return Number.isFinite(value) && value > 0 ? value : undefined;
  }

  markObserved(tsMs: number): Promise<void> {
    return this.store.setMeta(`observed/${this.cluster}/${resourceKey(this.sample)}`, String(tsMs));
  }

  /**
   * The last version of each recently written object (prepared for its profile once it is compared
   * with), so an event costs one normalisation instead of two and no re-read of the stored body.
   */
  private readonly chain: VersionChain<LastVersion>;

  private async lastVersion(key: ObjectKey): Promise<LastVersion | undefined> {
    const last = await this.chain.get(key);
    if (last && last.obj !== null && last.version === undefined) last.version = prepare(this.profileOf(last.obj as KubeObject), last.obj);
    return last;
  }

  /**
   * A version compared with the object's last, if it is new (undefined if not): the write to store, and the object's last
   * version from now on (memory says so at once; the store is told when the batch ends). `follows`: from a watch, which
   * delivers every version in order.
   */
  private async compare(key: ObjectKey, obj: KubeObject | null, resourceVersion: string, tsMs: number, follows = false): Promise<Compared | undefined> {
    const last = await this.lastVersion(key);
    if (last && last.resourceVersion === resourceVersion) return undefined;
    if (obj === null && last?.version === undefined) return undefined; // a delete of something never seen alive
    const profile = this.profileOf((obj ?? last?.obj) as KubeObject | undefined);
    const before = last?.version && last.version.profile !== profile.name ? prepare(profile, last.version.obj) : last?.version;
    const after = obj === null ? undefined : prepare(profile, obj as Json);
    const analysis = analyzeVersions(profile, before, after);
    const body = keptBody(analysis.cls, before?.obj, after?.obj);
    this.chain.set(key, { resourceVersion, obj: obj as Json | null, version: after });
    return {
      key,
      write: {
        tsMs,
        cls: analysis.cls,
        writer: analysis.writer,
        source: "watch",
        heartbeat: analysis.heartbeat,
        changes: analysis.changes,
        projection: analysis.projection,
        resourceVersion,
        // What an audit log without bodies names instead of the version a write made: the version it was sent against.
        ...(follows && last ? { previousVersion: last.resourceVersion } : {}),
        ...(body === undefined ? {} : { body }),
        ...(analysis.change && { change: analysis.change }),
        ...(analysis.traits && { traits: analysis.traits }),
      },
    };
  }

  /** Stores a version if it is new; returns whether it was. */
  private async observe(key: ObjectKey, obj: KubeObject | null, resourceVersion: string, tsMs: number): Promise<boolean> {
    const compared = await this.compare(key, obj, resourceVersion, tsMs);
    if (compared) await this.store.record(compared.key, compared.write);
    return compared !== undefined;
  }

  /**
   * A full list. The first one only establishes what exists (nothing was written just now). A relist
   * (after 410 Gone) records what changed while unobserved, and objects no longer listed as deleted.
   */
  async applyList(items: KubeObject[], listVersion: string, tsMs: number): Promise<number> {
    const first = (await this.resumeVersion()) === undefined;
    return this.chain.batch(
      this.store,
      async () => {
        await this.guard();
        let stored = 0;
        const listed = new Set<string>();
        for (const item of items) {
          const key = this.key(item);
          listed.add(`${key.namespace}/${key.name}`);
          const rv = item.metadata?.resourceVersion ?? listVersion;
          if (first && !(await this.chain.get(key))) {
            const profile = this.profileOf(item);
            const projection = project(profile, item as Json);
            await this.store.recordFirstSeen(key, tsMs, projection, item as Json, baselineOf(profile, { obj: item as Json, projection }));
            this.chain.set(key, { resourceVersion: rv, obj: item as Json });
          } else if (await this.observe(key, item, rv, tsMs)) stored++;
        }
        for (const key of await this.store.liveKeys(this.cluster, this.sample.group, this.sample.kind)) {
          if (!listed.has(`${key.namespace}/${key.name}`) && (await this.observe(key, null, `deleted@${listVersion}`, tsMs))) stored++;
        }
        await this.store.setMeta(this.resumeKey(), listVersion);
        await this.markObserved(tsMs);
        return stored;
      },
      [tsMs],
    );
  }

  /** One watch event; a bookmark only moves the resume point. Returns whether a version was stored. */
  async applyEvent(type: string, obj: KubeObject, tsMs: number): Promise<boolean> {
    return (await this.applyEvents([{ type, obj, tsMs }])) === 1;
  }

  /**
   * Events that arrived together, in order, in one transaction (one commit instead of one per event,
   * which is most of the cost). Returns how many versions were stored. Bursts may be handed before the
   * one before them is stored: each is compared while that one is stored, and they are stored in order.
   * `skip`: an event the profile cannot read is left out and told to it, instead of failing the burst.
   */
  applyEvents(events: { type: string; obj: KubeObject; tsMs: number }[], skip?: (error: Error) => void): Promise<number> {
    // Compared first, outside the transaction: its lock is held only while storing.
    return this.chain.batch(
      this.store,
      async ({ compared, resume }) => {
        await this.guard();
        await this.store.expectWatched(compared.map(({ key, write }) => ({ key, tsMs: write.tsMs })));
        for (const { key, write } of compared) await this.store.record(key, write);
        if (resume !== undefined) await this.store.setMeta(this.resumeKey(), resume);
        if (events.length > 0) await this.markObserved(events.at(-1)!.tsMs);
        return compared.length;
      },
      events.map((e) => e.tsMs),
      async () => {
        const compared: Compared[] = [];
        let resume: string | undefined;
        for (const [at, { type, obj, tsMs }] of events.entries()) {
          // The transaction before this burst's waits on the database server meanwhile: let its answers in now and then.
          if (this.store.waitsOnServer && at % YIELD_EVERY === YIELD_EVERY - 1) await new Promise(setImmediate);
          const rv = obj.metadata?.resourceVersion;
          if (!rv) continue;
          const version = type === "ADDED" || type === "MODIFIED" ? obj : type === "DELETED" ? null : undefined;
          try {
            const write = version === undefined ? undefined : await this.compare(this.key(obj), version, version === null ? `deleted@${rv}` : rv, tsMs, true);
            if (write) compared.push(write);
          } catch (error) {
            if (!skip) throw error;
            skip(error as Error);
          }
          resume = rv;
        }
        return { compared, resume };
      },
    );
  }
}

/** How many events a burst's comparing step takes between two looks at what the database answered. */
const YIELD_EVERY = 10;

/** A version to store: the write, of the object it was compared for. */
interface Compared {
  key: ObjectKey;
  write: StoredWrite;
}
