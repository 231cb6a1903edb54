/**
 * The recorder's pure core for one profile on one cluster: turns a list and the watch events that
 * follow into stored writes, against the last version stored for each object. A version already
 * stored (same resourceVersion) is never stored twice, and a relist reconciles: objects missing
 * from the list are recorded as deleted, changed ones as written. Time comes from the caller.
 */
import { analyze, project } from "../churn/analyze";
import type { Json } from "../churn/json";
import { profileFor, type Profile } from "../churn/profiles";
import type { ObjectKey, WriteStore } from "../store/store";

export interface KubeObject {
  metadata?: { name?: string; namespace?: string; resourceVersion?: string; labels?: Record<string, string> };
  [key: string]: unknown;
}

/** The resource a set of profiles reads (several profiles may read one resource, e.g. Connector project-side and hub copies). */
export function resourceKey(profile: Profile): string {
  return profile.group ? `${profile.resource}.${profile.group}` : profile.resource;
}

export class ProfileRecorder {
  private readonly sample: Profile;

  /** `profiles` all read the same resource; each object is read with the one that fits it (profileFor). */
  constructor(
    private readonly store: WriteStore,
    private readonly cluster: string,
    private readonly profiles: Profile[],
  ) {
    this.sample = profiles[0];
  }

  private key(obj: KubeObject): ObjectKey {
    return { cluster: this.cluster, group: this.sample.group, kind: this.sample.kind, namespace: obj.metadata?.namespace ?? "", name: obj.metadata?.name ?? "" };
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

  /** Stores a version if it is new; returns whether it was. */
  private observe(key: ObjectKey, obj: KubeObject | null, resourceVersion: string, tsMs: number): boolean {
    const last = this.store.latest(key);
    if (last && last.resourceVersion === resourceVersion) return false;
    const before = last?.body ? (JSON.parse(last.body) as Json) : undefined;
    if (obj === null && before === undefined) return false; // a delete of something never seen alive
    const after = obj === null ? undefined : (obj as Json);
    const analysis = analyze(this.profileOf((after ?? before) as KubeObject | undefined), before, after);
    const body = analysis.cls === "create" ? after : analysis.cls === "delete" ? before : undefined;
    this.store.record(key, { tsMs, cls: analysis.cls, writer: analysis.writer, source: "watch", heartbeat: analysis.heartbeat, changes: analysis.changes, projection: analysis.projection, resourceVersion, ...(body === undefined ? {} : { body }) });
    this.store.setLatest(key, resourceVersion, obj === null ? null : JSON.stringify(obj));
    return true;
  }

  /**
   * A full list. The first one only establishes what exists (nothing was written just now). A relist
   * (after 410 Gone) records what changed while unobserved, and objects no longer listed as deleted.
   */
  applyList(items: KubeObject[], listVersion: string, tsMs: number): number {
    const first = this.resumeVersion() === undefined;
    return this.store.batch(() => {
      let stored = 0;
      const listed = new Set<string>();
      for (const item of items) {
        const key = this.key(item);
        listed.add(`${key.namespace}/${key.name}`);
        const rv = item.metadata?.resourceVersion ?? listVersion;
        if (first && !this.store.latest(key)) {
          this.store.recordFirstSeen(key, tsMs, project(this.profileOf(item), item as Json), item as Json);
          this.store.setLatest(key, rv, JSON.stringify(item));
        } else if (this.observe(key, item, rv, tsMs)) stored++;
      }
      for (const key of this.store.liveKeys(this.cluster, this.sample.group, this.sample.kind)) {
        if (!listed.has(`${key.namespace}/${key.name}`) && this.observe(key, null, `deleted@${listVersion}`, tsMs)) stored++;
      }
      this.store.setMeta(this.resumeKey(), listVersion);
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
    return this.store.batch(() => {
      let stored = 0;
      let resume: string | undefined;
      for (const { type, obj, tsMs } of events) {
        const rv = obj.metadata?.resourceVersion;
        if (!rv) continue;
        if (type === "ADDED" || type === "MODIFIED") stored += this.observe(this.key(obj), obj, rv, tsMs) ? 1 : 0;
        else if (type === "DELETED") stored += this.observe(this.key(obj), null, `deleted@${rv}`, tsMs) ? 1 : 0;
        resume = rv;
      }
      if (resume !== undefined) this.store.setMeta(this.resumeKey(), resume);
      return stored;
    });
  }
}
