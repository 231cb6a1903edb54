/**
 * The recorder's pure core for one profile on one cluster: turns a list and the watch events that
 * follow into stored writes, against the last version stored for each object. A version already
 * stored (same resourceVersion) is never stored twice, and a relist reconciles: objects missing
 * from the list are recorded as deleted, changed ones as written. Time comes from the caller.
 */
import { analyzeVersions, prepare, project, type Version } from "../churn/analyze";
import type { Json } from "../churn/json";
import { profileFor, type Profile } from "../churn/profiles";
import { clusterScope } from "../churn/scope";
import type { WriteStore } from "../store/store";
import type { ObjectKey } from "../wire/objects";

export interface KubeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

/** An object the recorder can key: a mapping whose metadata has a name (and a namespace, if any, as text). */
export function namedObject(obj: unknown): obj is KubeObject {
  if (typeof obj !== "object" || obj === null || Array.isArray(obj)) return false;
  const meta = (obj as KubeObject).metadata;
  return typeof meta === "object" && meta !== null && typeof meta.name === "string" && meta.name !== "" && (meta.namespace === undefined || typeof meta.namespace === "string");
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

export class ProfileRecorder {
  private readonly sample: Profile;
  /** the server sends cluster-scoped objects without a namespace; this keeps them so should one carry it */
  private readonly clusterScoped: boolean;

  /** `profiles` all read the same resource; each object is read with the one that fits it (profileFor). */
  constructor(
    private readonly store: WriteStore,
    private readonly cluster: string,
    private readonly profiles: Profile[],
  ) {
    this.sample = profiles[0];
    this.clusterScoped = clusterScope(profiles)(this.sample.group, this.sample.resource);
  }

  private key(obj: KubeObject): ObjectKey {
    return { cluster: this.cluster, group: this.sample.group, kind: this.sample.kind, namespace: this.clusterScoped ? "" : (obj.metadata?.namespace ?? ""), name: obj.metadata?.name ?? "" };
  }

  private profileOf(obj: KubeObject | undefined): Profile {
    return profileFor(this.profiles, this.sample.group, this.sample.kind, this.cluster, obj?.metadata?.labels) ?? this.sample;
  }

  private resumeKey(): string {
    return `resume/${this.cluster}/${resourceKey(this.sample)}`;
  }

  /** Where a watch can continue from, if the store knows. */
  resumeVersion(): string | undefined {
    return this.store.getMeta(this.resumeKey());
  }

  /**
   * Until when this resource was last known to be observed (the last list, event batch, or clean
   * stop): where a period the recorder could not observe starts, even when it ran in an earlier process.
   */
  observedUntilMs(): number | undefined {
    const value = Number(this.store.getMeta(`observed/${this.cluster}/${resourceKey(this.sample)}`));
    return Number.isFinite(value) && value > 0 ? value : undefined;
  }

  markObserved(tsMs: number): void {
    this.store.setMeta(`observed/${this.cluster}/${resourceKey(this.sample)}`, String(tsMs));
  }

  /**
   * The last version of each recently written object, already normalised and projected, so an event
   * costs one normalisation instead of two and no re-read of the stored body. The store stays the
   * truth: a miss reads it, and this recorder is the only writer of its objects' last versions.
   */
  private readonly recent = new Map<string, { resourceVersion: string; version?: Version }>();

  private lastVersion(key: ObjectKey, id: string): { resourceVersion: string; version?: Version } | undefined {
    const hit = this.recent.get(id);
    if (hit) return hit;
    const row = this.store.latest(key);
    if (!row) return undefined;
    const obj = row.body ? (JSON.parse(row.body) as Json) : undefined;
    return { resourceVersion: row.resourceVersion, version: obj === undefined ? undefined : prepare(this.profileOf(obj as KubeObject), obj) };
  }

  /** One transaction; if it fails, what this recorder remembers of it is forgotten too, and the store is read again. */
  private inBatch<T>(work: () => T): T {
    try {
      return this.store.batch(work);
    } catch (error) {
      this.recent.clear();
      this.unsaved.clear();
      throw error;
    }
  }

  private readonly unsaved = new Map<string, { key: ObjectKey; resourceVersion: string; obj: KubeObject | null }>();

  private saveLatest() {
    for (const { key, resourceVersion, obj } of this.unsaved.values()) this.store.setLatest(key, resourceVersion, obj === null ? null : JSON.stringify(obj));
    this.unsaved.clear();
  }

  private remember(id: string, resourceVersion: string, version: Version | undefined) {
    this.recent.delete(id);
    this.recent.set(id, { resourceVersion, version });
    if (this.recent.size > RECENT_OBJECTS) this.recent.delete(this.recent.keys().next().value as string);
  }

  /** Stores a version if it is new; returns whether it was. */
  private observe(key: ObjectKey, obj: KubeObject | null, resourceVersion: string, tsMs: number): boolean {
    const id = `${key.namespace}/${key.name}`;
    const last = this.lastVersion(key, id);
    if (last && last.resourceVersion === resourceVersion) return false;
    if (obj === null && last?.version === undefined) return false; // a delete of something never seen alive
    const profile = this.profileOf((obj ?? last?.version?.obj) as KubeObject | undefined);
    const before = last?.version && last.version.profile !== profile.name ? prepare(profile, last.version.obj) : last?.version;
    const after = obj === null ? undefined : prepare(profile, obj as Json);
    const analysis = analyzeVersions(profile, before, after);
    const body = analysis.cls === "create" ? after?.obj : analysis.cls === "delete" ? before?.obj : undefined;
    this.store.record(key, { tsMs, cls: analysis.cls, writer: analysis.writer, source: "watch", heartbeat: analysis.heartbeat, changes: analysis.changes, projection: analysis.projection, resourceVersion, ...(body === undefined ? {} : { body }) });
    // Written when the burst's transaction ends: an object written several times in a burst is saved once.
    this.unsaved.set(id, { key, resourceVersion, obj });
    this.remember(id, resourceVersion, after);
    return true;
  }

  /**
   * A full list. The first one only establishes what exists (nothing was written just now). A relist
   * (after 410 Gone) records what changed while unobserved, and objects no longer listed as deleted.
   */
  applyList(items: KubeObject[], listVersion: string, tsMs: number): number {
    const first = this.resumeVersion() === undefined;
    return this.inBatch(() => {
      let stored = 0;
      const listed = new Set<string>();
      for (const item of items) {
        const key = this.key(item);
        listed.add(`${key.namespace}/${key.name}`);
        const rv = item.metadata?.resourceVersion ?? listVersion;
        if (first && !this.store.latest(key)) {
          this.store.recordFirstSeen(key, tsMs, project(this.profileOf(item), item as Json), item as Json);
          this.store.setLatest(key, rv, JSON.stringify(item));
          this.recent.delete(`${key.namespace}/${key.name}`);
        } else if (this.observe(key, item, rv, tsMs)) stored++;
      }
      for (const key of this.store.liveKeys(this.cluster, this.sample.group, this.sample.kind)) {
        if (!listed.has(`${key.namespace}/${key.name}`) && this.observe(key, null, `deleted@${listVersion}`, tsMs)) stored++;
      }
      this.saveLatest();
      this.store.setMeta(this.resumeKey(), listVersion);
      this.markObserved(tsMs);
      return stored;
    });
  }

  /** One watch event; a bookmark only moves the resume point. Returns whether a version was stored. */
  applyEvent(type: string, obj: KubeObject, tsMs: number): boolean {
    return this.applyEvents([{ type, obj, tsMs }]) === 1;
  }

  /**
   * Events that arrived together, in order, in one transaction (one commit instead of one per event,
   * which is most of the cost). Returns how many versions were stored.
   */
  applyEvents(events: { type: string; obj: KubeObject; tsMs: number }[]): number {
    return this.inBatch(() => {
      let stored = 0;
      let resume: string | undefined;
      for (const { type, obj, tsMs } of events) {
        const rv = obj.metadata?.resourceVersion;
        if (!rv) continue;
        if (type === "ADDED" || type === "MODIFIED") stored += this.observe(this.key(obj), obj, rv, tsMs) ? 1 : 0;
        else if (type === "DELETED") stored += this.observe(this.key(obj), null, `deleted@${rv}`, tsMs) ? 1 : 0;
        resume = rv;
      }
      this.saveLatest();
      if (resume !== undefined) this.store.setMeta(this.resumeKey(), resume);
      if (events.length > 0) this.markObserved(events.at(-1)!.tsMs);
      return stored;
    });
  }
}
