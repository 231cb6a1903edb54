/** What the Clients view receives (/api/clients): declared once for the server and the browser. */
import type { NoopEvidence } from "../churn/preconditions";
import type { Series } from "../promql/types";

export interface ClientRow {
  client: string;
  user: string;
  agent: string;
  writes: number;
  failed: number;
  /** successful writes that changed nothing, and that changed the object (the rest are not known either way) */
  noop: number;
  changed: number;
  /** reviews and TokenRequests among `writes`: answered without storing anything */
  neverStored: number;
  /** writes by verb (and subresource), most first */
  verbs: { verb: string; writes: number }[];
  /** the user agent's versions in the range ("" where it names none), first seen first: a rollout shows as two */
  versions: { version: string; writes: number; noop: number; changed: number; firstMs: number; lastMs: number }[];
}

export interface TopEntry {
  client: string;
  writes: number;
}

export interface ClientsAnswer {
  startMs: number;
  endMs: number;
  stepMs: number;
  clusters: string[];
  total: number;
  /** reviews and TokenRequests among `total` */
  neverStored: number;
  clients: ClientRow[];
  /** what the no-op and changed counts rest on ("not kept": stored before Churnscope kept it), most first */
  evidence: { evidence: NoopEvidence | "not kept"; noop: number; changed: number }[];
  /** successful writes whose effect is not known: logged without bodies and not decided by a precondition */
  unknown: number;
  /** writes per step for the top clients, the rest as one series */
  series: Series[];
  /** `neverStored`: the resource's requests are answered without storing anything (reviews, TokenRequests) */
  byResource: { resource: string; writes: number; noop: number; neverStored: boolean; top: TopEntry[] }[];
  byObject: { resource: string; namespace: string; name: string; writes: number; noop: number; top: TopEntry[] }[];
  comparison: { atMs: number; windowMs: number; rows: { client: string; before: number; after: number; changePct: number | null }[] } | null;
}
