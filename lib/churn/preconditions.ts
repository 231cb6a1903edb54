/**
 * No-op writes told from an audit log without bodies (Metadata level). An update's request carries the
 * version the client read (`objectRef.resourceVersion`, its precondition). A successful update with
 * precondition P that changed the object moved it past P, so any later update with precondition P would
 * have failed with 409: when the next successful write of the same object also had precondition P, the
 * earlier one changed nothing. When the next one had another precondition, the object moved between the
 * two, and the earlier write, the only one logged between them, moved it. A write without a precondition
 * (most patches, every delete) says nothing, nor does the last write of an object seen so far.
 */

/** What a write's no-op flag rests on; null: it is not known. */
export type NoopEvidence = "body" | "same-version" | "same-precondition" | "precondition-moved" | "watch" | "watched-successor";

export const NOOP_EVIDENCE: readonly NoopEvidence[] = ["body", "same-version", "same-precondition", "precondition-moved", "watch", "watched-successor"];

/** One line for a person: what each kind of evidence means. */
export const NOOP_EVIDENCE_TEXT: Record<NoopEvidence, string> = {
  body: "the logged object compared with its previous logged version (RequestResponse level)",
  "same-version": "the API server answered with the version the object already had",
  "same-precondition":
    "the next successful update of the object sent the same precondition (objectRef.resourceVersion), which a change would have made fail with 409",
  "precondition-moved": "the next successful update sent another precondition: the object moved, and this was the only write logged between",
  watch: "the recorder's watch saw the version it made",
  "watched-successor": "the recorder's watch saw the version that followed its precondition, which this write, the last sent with that precondition, made",
};

/** Evidence resting on preconditions (a later write can change it); the rest is stronger and never replaced by it. */
export const isPreconditionEvidence = (evidence: NoopEvidence | null): boolean =>
  evidence === null || evidence === "same-precondition" || evidence === "precondition-moved" || evidence === "watched-successor";

/** One successful write of an object, in the order the API server completed them. */
export interface PreconditionWrite {
  /** the version the client sent ("" or absent: none) */
  precondition?: string;
  /** what its flag rests on now */
  evidence: NoopEvidence | null;
}

export interface PreconditionVerdict {
  /** true: changed nothing; false: changed the object; null: not known */
  noop: boolean | null;
  evidence: NoopEvidence | null;
}

/**
 * Each write's verdict by the precondition rule, or undefined where stronger evidence already decided
 * it. `writes` are one object's successful writes in completion order, with nothing left out between them.
 */
export function preconditionVerdicts(writes: readonly PreconditionWrite[]): (PreconditionVerdict | undefined)[] {
  return writes.map((write, i) => {
    if (!isPreconditionEvidence(write.evidence)) return undefined;
    const precondition = write.precondition ?? "";
    const next = writes[i + 1]?.precondition ?? "";
    if (precondition === "" || next === "") return { noop: null, evidence: null };
    return next === precondition ? { noop: true, evidence: "same-precondition" } : { noop: false, evidence: "precondition-moved" };
  });
}
