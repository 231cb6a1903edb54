/** What an audit ingest reports (the CLI, an upload, a webhook batch): declared once for the server and the browser. */

export interface ReadCounts {
  lines: number;
  blank: number;
  malformed: number;
  /** JSON that is not an audit event */
  foreign: number;
  events: number;
  /** RequestReceived / ResponseStarted: only completed requests count */
  notCompleted: number;
  /** reads and watches (counted in `calls`) */
  notWrites: number;
  /** writes sent with ?dryRun: validated and answered, never stored */
  dryRuns: number;
  /** audit events that cannot be used (no auditID, no time, no resource) */
  invalid: number;
  /** requests counted per client but not stored one by one: reads, watches' starts and ends, dry runs, non-resource requests */
  calls: number;
  /** such requests on lines of a log (or in a webhook batch) counted before: left out */
  callsCountedBefore: number;
}

export interface IngestProblem {
  source: string;
  line: number;
  message: string;
}

export interface StoreCounts {
  /** the same auditID and stage already stored */
  duplicates: number;
  requests: number;
  /** requests answered with an error status: counted per client, not object writes */
  failed: number;
  /** writes to kinds no profile reads, or to whole collections: counted per client only */
  unprofiled: number;
  objectWrites: number;
  noop: number;
  unknown: number;
  /** writes the watch recorder had already stored, now with their audit details */
  matchedWatch: number;
  /** reads, watch starts and the other requests not stored one by one, counted per client into the store (writes are `requests`) */
  callsCounted: number;
  /** watches whose end was stored, with how long each lived */
  watchEnds: number;
}

export type IngestCounts = ReadCounts & StoreCounts;

export interface IngestAnswer {
  cluster: string;
  bytes: number;
  seconds: number;
  counts: IngestCounts;
  problems: IngestProblem[];
  summary: string;
}

/** What the audit webhook answers a batch: it is on disk, and this much is waiting to be taken into the store. */
export interface WebhookAnswer {
  cluster: string;
  bytes: number;
  seconds: number;
  queued: { batches: number; bytes: number };
}

/** One object of an audit bucket source as the Clients view lists it. */
export interface BucketObjectStatus {
  key: string;
  bytes: number;
  modifiedMs: number;
  readMs: number;
  /** read; problems: read, some lines not (detail says which); skipped: too large to read */
  outcome: "read" | "problems" | "skipped";
  detail: string;
  requests: number;
}

/** An audit bucket source (audit.sources): where it reads, how its polls went, what it read. */
export interface AuditSourceStatus {
  name: string;
  cluster: string;
  /** s3://bucket/prefix */
  location: string;
  pollSeconds: number;
  polls: number;
  lastPollMs: number | null;
  lastSuccessMs: number | null;
  /** objects the last listing held (after the checkpoint) */
  listed: number;
  /** what the last poll could not do; null when it did everything */
  error: string | null;
  errorMs: number | null;
  objects: { read: number; problems: number; skipped: number };
  bytes: number;
  requests: number;
  /** the objects read last, newest first */
  recent: BucketObjectStatus[];
  /** the last objects read with problems or skipped, newest first */
  troubled: BucketObjectStatus[];
}

export interface AuditSourcesAnswer {
  sources: AuditSourceStatus[];
}
