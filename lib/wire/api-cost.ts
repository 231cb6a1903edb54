/** What the API cost view (the Clients page's calls) receives from /api/clients/calls: declared once for the server and the browser. */
import type { Series } from "../promql/types";

/** Where a list was served from, as its request asked: the watch cache (a resourceVersion it may be newer than), a consistent read, an exact version, or the next page of a paginated list. */
export const LIST_SOURCES = ["cache", "consistent", "exact", "continue"] as const;
export type ListSource = (typeof LIST_SOURCES)[number];

/** An answer's status, by class; 429 apart (API Priority and Fairness rejects with it), "none" where the log has no code. */
export const CODE_CLASSES = ["2xx", "3xx", "4xx", "429", "5xx", "none"] as const;
export type CodeClass = (typeof CODE_CLASSES)[number];

export const READ_VERBS = ["get", "list", "watch"] as const;
export const WRITE_VERBS = ["create", "update", "patch", "delete", "deletecollection"] as const;

/** Calls of one shape in a window, as the store counted them (its minutes summed). */
export interface CallCount {
  user: string;
  agent: string;
  version: string;
  verb: string;
  /** `resource[.group][/subresource]`, or a non-resource path (starts with "/") */
  target: string;
  namespaced: boolean;
  code: CodeClass;
  listFrom: ListSource | "";
  paginated: boolean;
  /** 1 a label selector, 2 a field selector */
  selectors: number;
  /** the API Priority and Fairness FlowSchema that took it, and its priority level ("" where no FlowSchema was recorded) */
  flowSchema: string;
  priorityLevel: string;
  calls: number;
}

/** What one client, or one component (a user agent's name, all its users), cost the API server in a window. */
export interface CostFigures {
  calls: number;
  /** get, list and watch (starts) on resources */
  reads: number;
  /** create, update, patch, delete, deletecollection (dry runs included) */
  writes: number;
  /** requests on no resource (discovery, /healthz, /metrics, /openapi) */
  nonResource: number;
  /** successful writes that changed nothing (from the writes stored one by one; null where none is known either way) */
  noopWrites: number | null;
  byVerb: Record<string, number>;
  /** by what was called (`resource[.group][/subresource]`, or a path) */
  byTarget: Record<string, number>;
  lists: Record<ListSource, number>;
  paginatedLists: number;
  /** watches the API server started (answered 2xx: a rejected one never ran) */
  watchStarts: number;
  /** watch starts after each client's first on a kind (and scope) in the window */
  reestablishments: number;
  /** answered 429: rejected by API Priority and Fairness (or a client's own limit) */
  rejected: number;
  /** answered 4xx or 5xx (429 included) */
  failed: number;
}

export interface WatchLifetime {
  target: string;
  ended: number;
  medianMs: number;
}

export interface CostRow extends CostFigures {
  /** the user agent's name, or the user where the agent names none */
  component: string;
  /** `user · agent` for a client; the component's name for a component row */
  client: string;
  user: string;
  agent: string;
  versions: { version: string; calls: number }[];
  watchLifetimes: WatchLifetime[];
  /** a component with more than one client (many service accounts of one agent): each of them */
  members: CostRow[];
}

/** One side of a comparison. */
export interface CostWindow {
  startMs: number;
  endMs: number;
}

/** A figure before and after, per hour where the windows differ in length, with the change in per cent (null from 0). */
export interface Change {
  before: number;
  after: number;
  changePct: number | null;
}

export interface ComparedRow {
  component: string;
  /** "" for the component as a whole, else a user agent version or a client */
  detail: string;
  calls: Change;
  reads: Change;
  writes: Change;
  byVerb: Record<string, Change>;
  byTarget: Record<string, Change>;
  listsFromCache: Change;
  /** consistent, exact and continued lists: read from etcd (or, where ConsistentListFromCache is on, the cache) */
  listsConsistent: Change;
  watchStarts: Change;
  reestablishments: Change;
  /** what fell or rose most, in one sentence */
  sentence: string;
}

export interface CostComparison {
  before: CostWindow;
  after: CostWindow;
  /** true: figures are per hour (the windows differ in length); false: counts */
  perHour: boolean;
  rows: ComparedRow[];
}

/** One minute in which many clients listed one kind: a LIST storm (each list read the whole collection). */
export interface ListStorm {
  minuteMs: number;
  target: string;
  clients: number;
  lists: number;
  /** lists that asked for a resourceVersion (served from the watch cache) and the rest (from etcd, or the cache where ConsistentListFromCache) */
  fromCache: number;
  consistent: number;
  /** rejected (429) */
  rejected: number;
  components: { component: string; clients: number; lists: number }[];
}

/** An API Priority and Fairness FlowSchema: what its clients sent, what it rejected, and who was sending into it when it did. */
export interface FlowSchemaLoad {
  flowSchema: string;
  priorityLevel: string;
  calls: number;
  rejected: number;
  /** minutes with rejections */
  rejectingMinutes: number;
  /** the clients that sent into it in the minutes it rejected (all its clients where it never did), most rejected first */
  clients: { client: string; component: string; calls: number; rejected: number }[];
}

export interface ApiCostAnswer {
  startMs: number;
  endMs: number;
  stepMs: number;
  clusters: string[];
  total: CostFigures;
  components: CostRow[];
  /** calls per step by verb (of the selected client, or of all) */
  byVerb: Series[];
  /** calls per step of the top clients, the rest as one series */
  byClient: Series[];
  comparison: CostComparison | null;
  /** minutes in which at least MIN_STORM_CLIENTS clients listed one kind */
  listStorms: ListStorm[];
  minStormClients: number;
  /** per FlowSchema, where the FlowSchemas were recorded (empty otherwise: `notes` says so) */
  flowSchemas: FlowSchemaLoad[];
  /** what the counts cannot show, said on the page (no reads in the logs, names past the cap) */
  notes: string[];
}
