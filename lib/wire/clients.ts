/** What the Clients view receives (/api/clients): declared once for the server and the browser. */
import type { Series } from "../promql/types";

export interface ClientRow {
  client: string;
  user: string;
  agent: string;
  writes: number;
  failed: number;
  noop: number;
  /** writes by verb (and subresource), most first */
  verbs: { verb: string; writes: number }[];
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
  clients: ClientRow[];
  /** writes per step for the top clients, the rest as one series */
  series: Series[];
  byResource: { resource: string; writes: number; noop: number; top: TopEntry[] }[];
  byObject: { resource: string; namespace: string; name: string; writes: number; noop: number; top: TopEntry[] }[];
  comparison: { atMs: number; windowMs: number; rows: { client: string; before: number; after: number; changePct: number | null }[] } | null;
}
