/**
 * The reader in a thread of its own (ingestFileThreaded starts it): reads one file and reports its
 * completed write requests in batches, each response body as JSON text, so the ingester's thread
 * parses a body only when its version is new. It reads ahead at most a few batches: the ingester
 * answers each batch it has taken.
 */
import { parentPort, workerData } from "node:worker_threads";
import { postOutcome } from "../runtime/threads";
import type { IngestProblem, ReadCounts } from "../wire/audit";
import type { FlowSchema } from "../churn/flow-schemas";
import { CallTally, type TallyData } from "./calls";
import type { AuditRequest } from "./event";
import { AuditReader, readFileLines } from "./reader";

/** Batches reported and not yet taken by the ingester before reading pauses. */
const READ_AHEAD = 32;
/**
 * Counted calls sent once this many keys are waiting (and at the end): a minute of a busy log spans many chunks, and
 * its keys, counted here over those chunks, cross to the ingester once instead of once a chunk.
 */
const CALLS_SENT_AT = 20_000;

export interface ReadBatch {
  requests: AuditRequest[];
  sizes: number[];
  /** every other request counted per client on the lines read since the last batch */
  calls: TallyData;
  bytesRead: number;
}

/** What the thread answers once the file is read. */
export interface ReadTotals {
  counts: ReadCounts;
  problems: IngestProblem[];
}

const { path, label, callsFromLine, flowSchemas } = workerData as { path: string; label: string; callsFromLine: number; flowSchemas: FlowSchema[] };

void postOutcome<ReadTotals, ReadBatch>(async (report) => {
  let requests: AuditRequest[] = [];
  let sizes: number[] = [];
  const calls = new CallTally();
  const reader = new AuditReader(
    (request, bytes) => {
      const response = request.response;
      if (response?.object !== undefined) {
        response.json = JSON.stringify(response.object);
        response.object = undefined;
      }
      requests.push(request);
      sizes.push(bytes);
    },
    undefined,
    (event, lineNo) => calls.count(event, flowSchemas, lineNo),
  );
  reader.callsFromLine = callsFromLine;
  reader.flowSchemas = flowSchemas;
  let credits = READ_AHEAD;
  let wake: (() => void) | undefined;
  parentPort?.on("message", () => {
    credits++;
    wake?.();
  });
  let read = 0;
  const send = async (bytesRead: number, last: boolean) => {
    while (credits === 0) await new Promise<void>((resolve) => (wake = resolve));
    credits--;
    const none: TallyData = { counts: [], watches: [], throughLine: 0 };
    report({ requests, sizes, calls: last || calls.size >= CALLS_SENT_AT ? calls.take() : none, bytesRead });
    requests = [];
    sizes = [];
  };
  await readFileLines(reader, path, label, (bytesRead) => send((read = bytesRead), false));
  await send(read, true);
  return { counts: reader.counts, problems: reader.problems };
});
