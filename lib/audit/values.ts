/**
 * JSON values that are not one per line: spread over lines, as jq and the AWS CLI print them
 * (`jq 'select(.verb == "update")' audit.log`, `aws logs filter-log-events`), and run together with
 * nothing between them, as Firehose writes its records to an S3 object. Only strings and brackets are
 * tracked, to find where each value ends; each value is then parsed on its own.
 */

const SPACE = 0x20;
const TAB = 0x09;
const CR = 0x0d;
const NEWLINE = 0x0a;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;
const OPEN_BRACKET = 0x5b;
const CLOSE_BRACKET = 0x5d;
const LINE_END = Buffer.from("\n");

/** Whether a byte opens an object or an array: the values read this way. */
export const opensValue = (byte: number | undefined): boolean => byte === OPEN_BRACE || byte === OPEN_BRACKET;

export interface ValueSink {
  /** a whole value's bytes; `lineNo`: the line it began on. false: it is not JSON. */
  value(bytes: Buffer, lineNo: number): boolean;
  malformed(lineNo: number, message: string): void;
}

/** Bytes of a value not ended yet that are still in the buffer they were read in: lines of one read chunk are not copied. */
interface Range {
  bytes: Buffer;
  start: number;
  end: number;
  /** the range ends where its line does (the line end itself, at `end`, is whitespace in the value) */
  atLineEnd: boolean;
}

export class ValueSequence {
  /** the value's bytes so far, copied out of buffers already left, then `range` */
  private chunks: Buffer[] = [];
  private range: Range | null = null;
  private keptBytes = 0;
  /** the line the value being read began on */
  private startLineNo = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** the value outgrew maxBytes: it is read to its end, not kept */
  private dropping = false;
  /** what followed a value on this line was not another value, or the value was not JSON: the rest of the line is not read */
  private skippingLine = false;

  constructor(
    private readonly maxBytes: number,
    private readonly sink: ValueSink,
  ) {}

  /** Inside a value that has not ended yet. */
  get reading(): boolean {
    return this.depth > 0;
  }

  /** The next bytes of line `lineNo`: all of it, or, for a line read in pieces, the next piece. */
  feed(bytes: Buffer, start: number, end: number, lineNo: number): void {
    let valueStart = start;
    for (let i = start; i < end && !this.skippingLine;) {
      if (this.depth === 0) {
        const byte = bytes[i];
        if (byte === SPACE || byte === TAB || byte === CR || byte === NEWLINE) {
          i++;
          continue;
        }
        if (!opensValue(byte)) {
          this.sink.malformed(lineNo, "not JSON: text after a JSON value that is not another value");
          this.skippingLine = true;
          return;
        }
        valueStart = i++;
        this.depth = 1;
        this.startLineNo = lineNo;
        continue;
      }
      const byte = bytes[i++];
      if (this.inString) {
        if (this.escaped) this.escaped = false;
        else if (byte === BACKSLASH) this.escaped = true;
        else if (byte === QUOTE) this.inString = false;
      } else if (byte === QUOTE) this.inString = true;
      else if (byte === OPEN_BRACE || byte === OPEN_BRACKET) this.depth++;
      else if ((byte === CLOSE_BRACE || byte === CLOSE_BRACKET) && --this.depth === 0) {
        this.keep(bytes, valueStart, i);
        this.complete();
      }
    }
    if (this.depth > 0) this.keep(bytes, valueStart, end);
  }

  /** The end of a line: a value read on keeps its line end (whitespace between its tokens). */
  endLine(): void {
    this.skippingLine = false;
    if (this.depth > 0 && this.range) this.range.atLineEnd = true;
  }

  /** A value that never ended: cut off `where` a new one starts at a line's start, or at the file's end. */
  cutOff(where: string): void {
    if (this.depth === 0) return;
    if (!this.dropping) this.sink.malformed(this.startLineNo, `a JSON value that never ends: cut off ${where}`);
    this.reset();
  }

  /** Keeps bytes [start, end) of the value: where they follow the range's line end in its buffer, by widening the range. */
  private keep(bytes: Buffer, start: number, end: number): void {
    if (this.dropping) return;
    const range = this.range;
    if (range && range.bytes === bytes && range.atLineEnd && start === range.end + 1) {
      this.keptBytes += end - range.end;
      range.end = end;
      range.atLineEnd = false;
    } else {
      this.leaveRange();
      this.range = { bytes, start, end, atLineEnd: false };
      this.keptBytes += end - start;
    }
    if (this.keptBytes <= this.maxBytes) return;
    this.sink.malformed(this.startLineNo, `a JSON value longer than ${this.maxBytes / 1048576} MiB`);
    this.dropping = true;
    this.chunks = [];
    this.range = null;
  }

  /** Copies the range out of its buffer, which the reader is about to leave. */
  private leaveRange(): void {
    const range = this.range;
    if (!range) return;
    this.chunks.push(Buffer.from(range.bytes.subarray(range.start, range.end)));
    if (range.atLineEnd) this.chunks.push(LINE_END);
    this.range = null;
  }

  private complete(): void {
    if (!this.dropping) {
      const range = this.range!;
      const last = range.bytes.subarray(range.start, range.end);
      const whole = this.chunks.length === 0 ? last : Buffer.concat([...this.chunks, last]);
      if (!this.sink.value(whole, this.startLineNo)) this.skippingLine = true;
    }
    this.reset();
  }

  private reset(): void {
    this.chunks = [];
    this.range = null;
    this.keptBytes = 0;
    this.depth = 0;
    this.inString = false;
    this.escaped = false;
    this.dropping = false;
  }
}
