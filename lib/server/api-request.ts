/**
 * An API request as the pipeline and its handlers read it. A web Request is one (Next's route hands
 * those over); serve.cjs's adapter makes a lighter one over node:http's request, because building a
 * web Request and its Headers for every panel poll cost a fifth of an alert storm's throughput.
 */
import type { HeaderReader } from "./access";

export interface ApiRequest {
  method: string;
  /** as sent, absolute or from the path on: the pipeline reads it against a base */
  url: string;
  headers: HeaderReader;
  signal: AbortSignal;
  /** the body, for the methods that take one; null otherwise */
  body: ReadableStream<Uint8Array> | null;
}
