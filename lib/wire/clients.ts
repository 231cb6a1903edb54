/** What the Clients view receives (/api/clients): declared once for the server and the browser. */
import type { Series } from "../promql/types";

export interface ClientRow {
  client: string;
  user: string;
  agent: string;
  writes: number;
  failed: number;
  noop: number;
  /** reviews and TokenRequests among `writes`: answered without storing anything */
  neverStored: number;
  /** writes by verb (and subresource), most first */
  verbs: { verb: string; writes: number }[];
  /** the user agent's versions in the range ("" where it names none), first seen first: a rollout shows as two */
  versions: { version: string; writes: number; firstMs: number; lastMs: number }[];
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
  /** writes per step for the top clients, the rest as one series */
  series: Series[];
  /** `neverStored`: the resource's requests are answered without storing anything (reviews, TokenRequests) */
  byResource: { resource: string; writes: number; noop: number; neverStored: boolean; top: TopEntry[] }[];
  byObject: { resource: string; namespace: string; name: string; writes: number; noop: number; top: TopEntry[] }[];
  comparison: { atMs: number; windowMs: number; rows: { client: string; before: number; after: number; changePct: number | null }[] } | null;
}
