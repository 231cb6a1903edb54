/**
 * The reading half of the ingester: log bytes → lines → audit events → completed write requests,
 * with a count for every line and event it did not pass on and why. No store: it runs beside the
 * ingester, or in a thread of its own (parse-worker.ts) while the ingester stores.
 */
import { createReadStream } from "node:fs";
import { Readable } from "node:stream";
import { createGunzip } from "node:zlib";
import type { FlowSchema } from "../churn/flow-schemas";
import { flowOf, isCounted } from "./calls";
import { readLine, skipByHead, toRequest, valueOutcome, type AuditEvent, type AuditRequest, type LineOutcome, type SkipReason } from "./event";
import { opensValue, ValueSequence } from "./values";
import type { IngestProblem, ReadCounts } from "../wire/audit";

export const emptyReadCounts = (): ReadCounts => ({
  lines: 0,
  blank: 0,
  malformed: 0,
  foreign: 0,
  events: 0,
  notCompleted: 0,
  notWrites: 0,
  dryRuns: 0,
  invalid: 0,
  calls: 0,
  callsCountedBefore: 0,
});

const SKIPPED = { stage: "notCompleted", verb: "notWrites", dryRun: "dryRuns" } as const;

const MAX_PROBLEMS = 20;

export class AuditReader {
  readonly counts = emptyReadCounts();
  readonly problems: IngestProblem[] = [];
  /**
   * Calls are counted from this line on: the lines before it were counted when the same log was read before. A webhook
   * batch's events have no line (0): Infinity when the same batch was stored before.
   */
  callsFromLine = 0;
  /** the cluster's FlowSchemas in matching order (where the recorder watched them): each call is counted with the one that took it */
  flowSchemas: readonly FlowSchema[] = [];

  /**
   * `onRequest` gets each completed write request, in log order, with the bytes of its line; `onCall` every other
   * request counted per client (reads, watches, dry runs, non-resource requests), with its line; `ready`, awaited
   * after each chunk a stream is read in, holds the reading back while what it read waits to be stored.
   */
  constructor(
    private readonly onRequest: (request: AuditRequest, bytes: number) => void,
    readonly ready: () => Promise<void> = () => Promise.resolve(),
    private readonly onCall: (event: AuditEvent, lineNo: number) => boolean = () => false,
  ) {}

  private problem(source: string, line: number, message: string) {
    if (this.problems.length < MAX_PROBLEMS) this.problems.push({ source, line, message: message.slice(0, 300) });
  }

  /** A line that cannot be read (not JSON, too long, or where a file stopped decoding). */
  malformed(source: string, lineNo: number, message: string): void {
    this.counts.malformed++;
    this.problem(source, lineNo, message);
  }

  /** Why an event was not a completed write. */
  private skip(reason: SkipReason): void {
    this.counts[SKIPPED[reason]]++;
  }

  /** A line skipped from its head (skipByHead) without decoding the rest: one event. */
  skipped(reason: SkipReason): void {
    this.counts.lines++;
    this.counts.events++;
    this.skip(reason);
  }

  /** A line that is not audit data, known without parsing it (a container's own log output). */
  foreignLine(): void {
    this.counts.lines++;
    this.counts.foreign++;
  }

  /** One line of a log; `lineNo` and `source` only name it in problems. */
  line(text: string, lineNo: number, source: string, headChecked = false): void {
    this.counts.lines++;
    this.record(readLine(text, headChecked), lineNo, source, text.length);
  }

  /** One line of a log that the caller has parsed already (`bytes`: its length). */
  parsedLine(value: unknown, lineNo: number, source: string, bytes: number): void {
    this.counts.lines++;
    this.record(valueOutcome(value), lineNo, source, bytes);
  }

  /** What one record of a line held (a line holds several where JSON values run together); the line is counted apart. */
  record(outcome: LineOutcome, lineNo: number, source: string, bytes: number): void {
    switch (outcome.kind) {
      case "blank":
        this.counts.blank++;
        return;
      case "foreign":
        this.counts.foreign++;
        return;
      case "malformed":
        this.malformed(source, lineNo, `not JSON: ${outcome.message}`);
        return;
      case "skipped":
        this.counts.events++;
        this.skip(outcome.reason);
        return;
      case "events":
        this.events(outcome.events, source, lineNo, bytes);
    }
  }

  /** Events from one line or one webhook batch. */
  events(events: AuditEvent[], source: string, lineNo = 0, bytes = 0): void {
    for (const event of events) {
      this.counts.events++;
      const outcome = toRequest(event);
      if (outcome.kind === "skipped") {
        this.skip(outcome.reason);
        if (!isCounted(event)) continue;
        if (lineNo < this.callsFromLine) this.counts.callsCountedBefore++;
        else if (this.onCall(event, lineNo)) this.counts.calls++;
      } else if (outcome.kind === "invalid") {
        this.counts.invalid++;
        this.problem(source, lineNo, outcome.message);
      } else {
        const flow = flowOf(event, this.flowSchemas);
        this.onRequest(flow ? { ...outcome.request, flow } : outcome.request, bytes);
      }
    }
  }

  /** Adds what a reader in another thread counted. */
  absorb(counts: ReadCounts, problems: IngestProblem[]): void {
    for (const key of Object.keys(counts) as (keyof ReadCounts)[]) this.counts[key] += counts[key];
    for (const p of problems) this.problem(p.source, p.line, p.message);
  }
}

/**
 * A line longer than this (checked once per 1 MiB read) is not an audit event anyone logged: counted as
 * malformed and dropped. A write's event carries its request (the API server takes at most 3 MiB) and
 * the stored object (etcd keeps at most 1.5 MiB by default). The bound matters for memory: what a
 * line costs to parse depends on its shape: 16 MiB of empty objects take about 360 MB of heap and 2 s
 * (64 MiB, the bound before, about 1.4 GB: most of the pod's memory on its own).
 */
export const MAX_LINE_BYTES = 16 * 1024 * 1024;
/** How much of a line's start is read to decide whether it can be skipped (the fields that say so come first). */
const HEAD_BYTES = 1024;
const READ_BYTES = 1024 * 1024;
/** A line not ended after this many bytes is read on in pieces, where it is JSON values (see LineFeeder.piece). */
const PIECE_BYTES = READ_BYTES;
const NEWLINE = 0x0a;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
/** Where the API server's events run together with nothing between them, as in a Firehose S3 object. */
const RUN_TOGETHER = Buffer.from('}{"kind":"Event",');

const STAGE_COMPLETE = Buffer.from('"stage":"ResponseComplete"');

/** Why a line or value in the API server's own layout is visibly at a stage nothing counts (skipByHead), read from its first bytes. */
function headSkip(bytes: Buffer, start: number, end: number): SkipReason | null {
  const head = bytes.subarray(start, Math.min(end, start + HEAD_BYTES));
  // Most lines are completed requests, which are all read: found by their stage's bytes, without decoding the head.
  if (head.indexOf(STAGE_COMPLETE) >= 0) return null;
  // latin1 is a byte-for-byte decode: the markers it looks for are ASCII, and UTF-8 never fakes ASCII.
  return skipByHead(head.toString("latin1"));
}

/** Where a line's text starts, after spaces and tabs. */
function firstNonBlank(bytes: Buffer, start: number, end: number): number {
  let first = start;
  while (first < end && (bytes[first] === 0x20 || bytes[first] === 0x09)) first++;
  return first;
}

/**
 * One line's bytes to the reader. Lines that can be skipped from their head are never decoded in
 * full: most of an audit log is reads and RequestReceived stages, so this is most of the saving.
 * `containerOutput`: the line is a container's output (from a container log), where text that is not
 * JSON is the container's own logging, foreign to audit data, not a broken event.
 * false: the line was not read, because it opens a JSON value it does not hold whole (read on, as a ValueSequence).
 */
function feedLine(reader: AuditReader, bytes: Buffer, start: number, end: number, lineNo: number, label: string, containerOutput = false): boolean {
  let last = end;
  while (last > start && (bytes[last - 1] === 0x0d || bytes[last - 1] === 0x20)) last--;
  const braced = last > start && bytes[start] === OPEN_BRACE && bytes[last - 1] === CLOSE_BRACE;
  const reason = braced ? headSkip(bytes, start, last) : null;
  // A skippable head is the first event's alone where events run together: those are parsed (and fail, and are read as values).
  if (reason && bytes.subarray(start, last).indexOf(RUN_TOGETHER) === -1) return (reader.skipped(reason), true);
  const first = firstNonBlank(bytes, start, last);
  if (containerOutput && first < last && bytes[first] !== OPEN_BRACE) return (reader.foreignLine(), true);
  const text = bytes.toString("utf8", start, end);
  const outcome = readLine(text, braced);
  if (outcome.kind === "malformed" && !containerOutput && opensValue(bytes[first])) return false;
  reader.counts.lines++;
  reader.record(outcome, lineNo, label, text.length);
  return true;
}

/**
 * A line that starts with its time: a container log line as containerd and CRI-O write one (what
 * /var/log/pods holds, and what an API server started with `--audit-log-path=-` leaves there),
 * `<RFC 3339 time> <stdout|stderr> <P|F>[:tags] <output>`; or `<RFC 3339 time> <output>`, as
 * `kubectl logs --timestamps` prints a container's output and a CloudWatch Logs export to S3 writes
 * each log event (EKS's audit log among them).
 */
const TIMED_LINE = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d+)?(?:Z|[+-]\d\d:\d\d) (?:(stdout|stderr) ([PF])(?::[^ ]*)? )?/;
const DIGIT_0 = 0x30;
const DIGIT_9 = 0x39;
/** How a line of Docker's json-file log starts: `{"log":"…","stream":"stdout","time":"…"}`. */
const DOCKER_HEAD = Buffer.from('{"log":"');
const DOCKER_FIELDS = new Set(["log", "stream", "time", "attrs"]);

/**
 * A line of Docker's json-file log (all its fields, none other: a shipper's record adds its own): its stream and
 * output; or, for another line that starts the same way and is JSON, its parsed value, so it is not parsed again.
 */
function dockerLine(bytes: Buffer, start: number, end: number): { stream: string; output: Buffer } | { value: unknown } | undefined {
  if (end - start < DOCKER_HEAD.length || bytes.compare(DOCKER_HEAD, 0, DOCKER_HEAD.length, start, start + DOCKER_HEAD.length) !== 0) return undefined;
  let value: unknown;
  try {
    value = JSON.parse(bytes.toString("utf8", start, end));
  } catch {
    return undefined;
  }
  const line = value as { log?: unknown; stream?: unknown; time?: unknown };
  if (typeof line.log !== "string" || (line.stream !== "stdout" && line.stream !== "stderr") || typeof line.time !== "string") return { value };
  if (Object.keys(line).some((k) => !DOCKER_FIELDS.has(k))) return { value };
  return { stream: line.stream, output: Buffer.from(line.log) };
}

/**
 * Lines to the reader, container log lines unwrapped: the runtime cuts an output line longer than its
 * limit (16 KiB by default, so most RequestResponse writes) into `P` parts ended by an `F` part, per
 * stream, and the two streams interleave; the parts are joined into the line they were cut from. Docker's
 * json-file log cuts them the same way, into JSON lines whose `log` ends without its line end but the last.
 */
class LineFeeder {
  /** per stream: the parts read so far of a line not yet ended, or null when it outgrew MAX_LINE_BYTES */
  private readonly parts = new Map<string, { chunks: Buffer[]; bytes: number; lineNo: number } | null>();
  /** JSON values that a line does not hold whole: spread over lines, or run together */
  private readonly values: ValueSequence;
  /** the line being read has been given to `values` in pieces, its end not yet read */
  private midLine = false;

  constructor(
    private readonly reader: AuditReader,
    private readonly label: string,
  ) {
    this.values = new ValueSequence(MAX_LINE_BYTES, {
      // Skipped from its head like a line, where a printer kept the API server's order (jq does).
      value: (value, lineNo) => {
        const reason = headSkip(value, 0, value.length);
        const outcome: LineOutcome = reason ? { kind: "skipped", reason } : readLine(value.toString("utf8"), true);
        reader.record(outcome, lineNo, label, value.length);
        return outcome.kind !== "malformed";
      },
      malformed: (lineNo, message) => reader.malformed(label, lineNo, message),
    });
  }

  line(bytes: Buffer, start: number, end: number, lineNo: number): void {
    if (this.midLine || this.continuesValue(bytes[start], lineNo)) return this.readOn(bytes, start, end, lineNo);
    const docker = bytes[start] === OPEN_BRACE ? dockerLine(bytes, start, end) : undefined;
    if (docker && "value" in docker) return this.reader.parsedLine(docker.value, lineNo, this.label, end - start);
    if (docker) {
      const { stream, output } = docker;
      const final = output.length > 0 && output[output.length - 1] === NEWLINE;
      return this.part(stream, final ? "F" : "P", output, 0, final ? output.length - 1 : output.length, lineNo);
    }
    const head = bytes[start] >= DIGIT_0 && bytes[start] <= DIGIT_9 ? TIMED_LINE.exec(bytes.toString("latin1", start, Math.min(end, start + 80))) : null;
    if (!head) return void (feedLine(this.reader, bytes, start, end, lineNo, this.label) || this.readOn(bytes, start, end, lineNo));
    const [prefix, tag] = [head[0], head[2]];
    const stream: string | undefined = head[1];
    // Only timed: the line is whole.
    if (stream === undefined) return void feedLine(this.reader, bytes, start + prefix.length, end, lineNo, this.label, true);
    this.part(stream, tag, bytes, start + prefix.length, end, lineNo);
  }

  /** A stream's line (`tag` F, its last part) or a part of one (P). */
  private part(stream: string, tag: string, bytes: Buffer, outputStart: number, end: number, lineNo: number): void {
    let pending = this.parts.get(stream);
    if (pending === undefined && tag !== "P") return void feedLine(this.reader, bytes, outputStart, end, lineNo, this.label, true);
    // Each part is counted as a line; the joined line is read at its final part.
    if (tag === "P") this.reader.counts.lines++;
    if (pending === undefined) this.parts.set(stream, (pending = { chunks: [], bytes: 0, lineNo }));
    if (pending !== null) {
      pending.chunks.push(Buffer.from(bytes.subarray(outputStart, end)));
      pending.bytes += end - outputStart;
      if (pending.bytes > MAX_LINE_BYTES) {
        this.reader.malformed(this.label, pending.lineNo, `a container log line longer than ${MAX_LINE_BYTES / 1048576} MiB`);
        this.parts.set(stream, (pending = null));
      }
    }
    if (tag === "P") return;
    this.parts.delete(stream);
    if (pending === null) return void this.reader.counts.lines++;
    const whole = Buffer.concat(pending.chunks);
    feedLine(this.reader, whole, 0, whole.length, pending.lineNo, this.label, true);
  }

  /** Whether a line (its first byte) goes on with a value left open; one that opens a value instead cuts the open one off. */
  private continuesValue(firstByte: number, lineNo: number): boolean {
    if (!this.values.reading) return false;
    if (!opensValue(firstByte)) return true;
    this.values.cutOff(`before line ${lineNo}`);
    return false;
  }

  /** The rest of a line, read as JSON values: the line's end, or all of it. */
  private readOn(bytes: Buffer, start: number, end: number, lineNo: number): void {
    this.midLine = false;
    this.reader.counts.lines++;
    this.values.feed(bytes, start, end, lineNo);
    this.values.endLine();
  }

  /**
   * The start of a line not ended yet and already long (Firehose writes a whole S3 object's records on one
   * line): read now as JSON values, when it is one or more. false: left to be read whole when it ends.
   */
  piece(bytes: Buffer, lineNo: number): boolean {
    if (!this.midLine) {
      const opens =
        this.continuesValue(bytes[0], lineNo) ||
        (opensValue(bytes[firstNonBlank(bytes, 0, bytes.length)]) && bytes.compare(DOCKER_HEAD, 0, DOCKER_HEAD.length, 0, DOCKER_HEAD.length) !== 0);
      if (!opens) return false;
      this.midLine = true;
    }
    this.values.feed(bytes, 0, bytes.length, lineNo);
    return true;
  }

  /** At the end of a file: a line whose last part never came is cut off, and so is a JSON value that never ended. */
  end(): void {
    for (const pending of this.parts.values())
      if (pending) this.reader.malformed(this.label, pending.lineNo, "a container log line cut off: its parts end without a final (F) part");
    this.parts.clear();
    if (this.midLine) this.readOn(Buffer.alloc(0), 0, 0, 0);
    this.values.cutOff("at the end of the file");
  }
}

/** The stream's chunks, with whether it starts with gzip's magic bytes (read before anything is passed on). */
async function sniffGzip(raw: AsyncIterable<Buffer>): Promise<{ gzip: boolean; chunks: AsyncIterable<Buffer> }> {
  const iterator = raw[Symbol.asyncIterator]();
  const head: Buffer[] = [];
  let headBytes = 0;
  let done = false;
  while (headBytes < 2) {
    const next = await iterator.next();
    if (next.done) {
      done = true;
      break;
    }
    head.push(next.value);
    headBytes += next.value.length;
  }
  const first = Buffer.concat(head);
  async function* chunks(): AsyncGenerator<Buffer> {
    if (first.length > 0) yield first;
    if (done) return;
    for (let next = await iterator.next(); !next.done; next = await iterator.next()) yield next.value;
  }
  return { gzip: first.length >= 2 && first[0] === 0x1f && first[1] === 0x8b, chunks: chunks() };
}

/** The chunks inflated; a failure on either side ends both. */
function gunzipped(chunks: AsyncIterable<Buffer>): AsyncIterable<Buffer> {
  const source = Readable.from(chunks);
  const gunzip = createGunzip({ chunkSize: READ_BYTES });
  source.on("error", (error) => gunzip.destroy(error));
  gunzip.on("close", () => source.destroy());
  return source.pipe(gunzip);
}

/** Streams one file's lines into the reader (readStreamLines). */
export async function readFileLines(reader: AuditReader, path: string, label: string, onBytes?: (bytesRead: number) => void | Promise<void>): Promise<void> {
  const raw = createReadStream(path, { highWaterMark: READ_BYTES });
  try {
    await readStreamLines(reader, raw, label, onBytes);
  } finally {
    raw.destroy();
  }
}

/**
 * Streams a log's lines into the reader (a file, a bucket's object), gunzipped when it starts with gzip's magic
 * bytes (whatever its name). `onBytes` gets the bytes read so far (compressed bytes for a .gz, so it compares with
 * the file's size) after each chunk, which is also when a caller may store what was read. A corrupt .gz or a
 * stream that fails ends the log with a problem reported; what was read before it stays.
 */
export async function readStreamLines(
  reader: AuditReader,
  raw: AsyncIterable<Buffer>,
  label: string,
  onBytes?: (bytesRead: number) => void | Promise<void>,
): Promise<void> {
  let bytesRead = 0;
  let lineNo = 0;
  let carry: Buffer = Buffer.alloc(0);
  let dropping = false;
  const feeder = new LineFeeder(reader, label);
  try {
    const { gzip, chunks } = await sniffGzip(raw);
    async function* counted(): AsyncGenerator<Buffer> {
      for await (const chunk of chunks) {
        bytesRead += chunk.length;
        yield chunk;
      }
    }
    for await (const chunk of gzip ? gunzipped(counted()) : counted()) {
      const bytes = carry.length === 0 ? chunk : Buffer.concat([carry, chunk]);
      let start = 0;
      for (let end = bytes.indexOf(NEWLINE, start); end !== -1; end = bytes.indexOf(NEWLINE, start)) {
        lineNo++;
        if (dropping) dropping = false;
        else feeder.line(bytes, start, end, lineNo);
        start = end + 1;
      }
      carry = bytes.subarray(start);
      if (carry.length > PIECE_BYTES && feeder.piece(carry, lineNo + 1)) carry = Buffer.alloc(0);
      else if (carry.length > MAX_LINE_BYTES) {
        // Counted once, at its end; its bytes are not kept.
        if (!dropping) {
          reader.counts.lines++;
          reader.malformed(label, lineNo + 1, `a line longer than ${MAX_LINE_BYTES / 1048576} MiB`);
        }
        dropping = true;
        carry = Buffer.alloc(0);
      }
      await onBytes?.(bytesRead);
      await reader.ready();
    }
  } catch (error) {
    reader.malformed(label, lineNo + 1, `reading stopped: ${(error as Error).message}`);
    carry = Buffer.alloc(0);
  }
  if (carry.length > 0 && !dropping) feeder.line(carry, 0, carry.length, lineNo + 1);
  feeder.end();
  await onBytes?.(bytesRead);
}
