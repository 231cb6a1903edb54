/**
 * Recorded changes: a write that changed what a workload runs (its pod template: images, args, env, config
 * references, service account; never its replica count) or the revision a GitOps tool applied (Flux, Argo CD),
 * as one line and a diff. A profile says which of the two it reads (`changes`); the recorder and audit ingest
 * store the change with the write that made it. What a change is matched to writers by (its service account
 * and images) is kept with it.
 */
import type { Json } from "./json";
import type { FieldChange } from "./diff";
import type { Profile } from "./profile-schema";

export interface ChangeLine {
  path: string;
  /** "" when the field was added */
  before: string;
  /** "" when the field was removed */
  after: string;
}

export interface RecordedChange {
  summary: string;
  diff: ChangeLine[];
  /** what writers are matched against: the pod template's service account and container images ("" / [] for a revision) */
  subject: { serviceAccount: string; images: string[] };
  /** a baseline's: when its template was last written, as the object's managedFields tell (before it was first seen) */
  sinceMs?: number;
}

/** A diff's bounds: a template storm stores a few KB per change, however large the templates. */
export const MAX_DIFF_LINES = 40;
const MAX_VALUE_CHARS = 300;
export const MAX_SUMMARY_CHARS = 200;

type Obj = Record<string, Json>;
const asObj = (value: Json | undefined): Obj | undefined => (typeof value === "object" && value !== null && !Array.isArray(value) ? value : undefined);
const clip = (text: string, max: number) => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
const text = (value: Json | undefined) => (value === undefined ? "" : clip(typeof value === "string" ? value : JSON.stringify(value), MAX_VALUE_CHARS));

const TEMPLATE = "spec.template.";

function podSpec(obj: Json | undefined): Obj | undefined {
  return asObj(asObj(asObj(asObj(obj)?.spec)?.template)?.spec);
}

function containers(obj: Json | undefined): { name: string; image: string }[] {
  const spec = podSpec(obj);
  const list = [...(Array.isArray(spec?.initContainers) ? spec.initContainers : []), ...(Array.isArray(spec?.containers) ? spec.containers : [])];
  return list.map(asObj).flatMap((c) => (c && typeof c.image === "string" ? [{ name: typeof c.name === "string" ? c.name : "", image: c.image }] : []));
}

/** An image's repository and tag (or digest): `ghcr.io/org/nso:v0.26.4` → nso, v0.26.4. */
export function imageParts(image: string): { repository: string; name: string; tag: string } {
  const at = image.indexOf("@");
  const withoutDigest = at >= 0 ? image.slice(0, at) : image;
  const colon = withoutDigest.lastIndexOf(":");
  const hasTag = colon > withoutDigest.lastIndexOf("/");
  const repository = hasTag ? withoutDigest.slice(0, colon) : withoutDigest;
  // A digest shortened to its algorithm and 12 hex digits, as docker prints it.
  const tag = at >= 0 ? image.slice(at + 1, at + 20) : hasTag ? withoutDigest.slice(colon + 1) : "latest";
  return { repository, name: repository.slice(repository.lastIndexOf("/") + 1), tag };
}

export function subjectOf(obj: Json | undefined): RecordedChange["subject"] {
  const spec = podSpec(obj);
  const account = spec?.serviceAccountName ?? spec?.serviceAccount;
  return { serviceAccount: typeof account === "string" && account !== "" ? account : "default", images: containers(obj).map((c) => c.image) };
}

function imageLines(before: Json | undefined, after: Json | undefined): string[] {
  const old = new Map(containers(before).map((c) => [c.name, c.image]));
  return containers(after).flatMap(({ name, image }) => {
    const was = old.get(name);
    if (was === undefined || was === image) return [];
    const [a, b] = [imageParts(was), imageParts(image)];
    return [a.repository === b.repository ? `image ${b.name} ${a.tag} → ${b.tag}` : `image ${a.name}:${a.tag} → ${b.name}:${b.tag}`];
  });
}

/** One side of a write as the analysis holds it: the object and the profile's projection of it. */
export interface ChangeSide {
  obj: Json;
  projection: Record<string, string>;
}

/** The change a write made, if its profile records changes and it made one: a create, or a move of what the profile reads. */
export function changeOf(
  profile: Profile,
  cls: string,
  changes: FieldChange[],
  before: ChangeSide | undefined,
  after: ChangeSide | undefined,
): RecordedChange | undefined {
  if (!profile.changes || (cls !== "routed" && cls !== "create") || after === undefined) return undefined;
  if (profile.changes === "template") {
    const subject = subjectOf(after.obj);
    if (cls === "create") {
      const images = containers(after.obj).map((c) => `${imageParts(c.image).name} ${imageParts(c.image).tag}`);
      return { summary: clip(`created${images.length ? `: ${images.join(", ")}` : ""}`, MAX_SUMMARY_CHARS), diff: [], subject };
    }
    const inTemplate = changes.filter((c) => c.path.startsWith(TEMPLATE));
    if (inTemplate.length === 0) return undefined;
    const images = imageLines(before?.obj, after.obj);
    const others = inTemplate.filter((c) => !/\]\.image$/.test(c.path)).map((c) => c.path.slice(TEMPLATE.length));
    const summary = images.length > 0 ? images.join(", ") : `template: ${others[0]}${others.length > 1 ? ` and ${others.length - 1} more` : ""}`;
    return { summary: clip(summary, MAX_SUMMARY_CHARS), diff: linesOf(inTemplate, TEMPLATE), subject };
  }
  // A revision: what the profile projects moved (Flux's applied revision, Argo CD's synced one).
  const was = before?.projection ?? {};
  const moved = Object.keys(after.projection).filter((name) => was[name] !== after.projection[name]);
  const summary =
    cls === "create"
      ? `created at ${
          moved
            .map((name) => after.projection[name])
            .filter(Boolean)
            .join(", ") || "no revision yet"
        }`
      : moved.map((name) => `${name} ${was[name] || "(none)"} → ${after.projection[name] || "(none)"}`).join(", ");
  return {
    summary: clip(summary, MAX_SUMMARY_CHARS),
    diff: moved.slice(0, MAX_DIFF_LINES).map((name) => ({ path: name, before: text(was[name]), after: text(after.projection[name]) })),
    subject: { serviceAccount: "", images: [] },
  };
}

/** What an object a profile records changes of runs when first seen: not a change, but where "no change since" counts from. */
export function baselineOf(profile: Profile, side: ChangeSide): RecordedChange | undefined {
  if (profile.changes === "template") {
    const images = containers(side.obj).map((c) => `${imageParts(c.image).name} ${imageParts(c.image).tag}`);
    const sinceMs = templateWrittenMs(side.obj);
    return {
      summary: clip(`running ${images.join(", ") || "no containers"}`, MAX_SUMMARY_CHARS),
      diff: [],
      subject: subjectOf(side.obj),
      ...(sinceMs !== undefined && { sinceMs }),
    };
  }
  if (profile.changes === "revision") {
    const at = Object.entries(side.projection).map(([name, value]) => `${name} ${value || "(none)"}`);
    return { summary: clip(`at ${at.join(", ")}`, MAX_SUMMARY_CHARS), diff: [], subject: { serviceAccount: "", images: [] } };
  }
  return undefined;
}

/** The latest time a field manager that owns part of the pod template wrote the object: no template change is later. */
function templateWrittenMs(obj: Json): number | undefined {
  const entries = asObj(asObj(obj)?.metadata)?.managedFields;
  if (!Array.isArray(entries)) return undefined;
  const times = entries.flatMap((entry) => {
    const e = asObj(entry);
    const owns = asObj(asObj(asObj(e?.fieldsV1)?.["f:spec"])?.["f:template"]) !== undefined;
    const ms = typeof e?.time === "string" ? Date.parse(e.time) : NaN;
    return owns && Number.isFinite(ms) ? [ms] : [];
  });
  return times.length > 0 ? Math.max(...times) : undefined;
}

function linesOf(changes: FieldChange[], prefix: string): ChangeLine[] {
  return changes.slice(0, MAX_DIFF_LINES).map((c) => ({
    path: clip(c.path.startsWith(prefix) ? c.path.slice(prefix.length) : c.path, MAX_VALUE_CHARS),
    before: text(c.before),
    after: text(c.after),
  }));
}
