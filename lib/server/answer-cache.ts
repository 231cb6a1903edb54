/**
 * Panel answers as sent, kept for as long as Prometheus's answers are reused (prometheus.cacheSeconds):
 * encoded once, gzipped once, with an ETag, so two hundred viewers of one alert cost one encoding and a
 * browser that has the answer gets 304. Keyed by the request's path and query; access is checked first.
 */
import { createHash } from "node:crypto";
import { gzipSync } from "node:zlib";

export interface EncodedAnswer {
  httpStatus: number;
  etag: string;
  plain: Buffer;
  /** made on first use by a browser that takes gzip */
  gzipped?: Buffer;
}

const MAX_ENTRIES = 500;

export function encodeAnswer(httpStatus: number, body: unknown): EncodedAnswer {
  const plain = Buffer.from(JSON.stringify(body));
  return { httpStatus, plain, etag: `"${createHash("sha1").update(plain).digest("base64url").slice(0, 22)}"` };
}

/** Level 1: a third of the default level's time, and the answer 20 % larger (writes-by-resource: 0.9 vs 2.7 ms). */
export function gzippedOf(answer: EncodedAnswer): Buffer {
  return (answer.gzipped ??= gzipSync(answer.plain, { level: 1 }));
}

export class AnswerCache {
  private readonly entries = new Map<string, { answer: EncodedAnswer; expiresMs: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly clock: () => number = Date.now,
  ) {}

  get(key: string): EncodedAnswer | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.expiresMs <= this.clock()) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.answer;
  }

  /** Successful answers only: a failure is asked again. */
  set(key: string, answer: EncodedAnswer): void {
    if (this.ttlMs <= 0 || answer.httpStatus !== 200) return;
    if (this.entries.size >= MAX_ENTRIES) this.entries.delete(this.entries.keys().next().value as string);
    this.entries.set(key, { answer, expiresMs: this.clock() + this.ttlMs });
  }
}

/** Whether If-None-Match names this ETag (a list, weak or not, or `*`). */
export function matchesEtag(header: string | undefined, etag: string): boolean {
  if (!header) return false;
  return header.split(",").some((tag) => {
    const t = tag.trim();
    return t === "*" || t === etag || t === `W/${etag}`;
  });
}

/** How long a browser may keep an answer: a success is kept and asked for again with its ETag; a failure never. */
export function cacheHeaders(answer: EncodedAnswer): Record<string, string> {
  return answer.httpStatus === 200 ? { "Cache-Control": "private, no-cache", ETag: answer.etag } : { "Cache-Control": "no-store" };
}

/** Whether the browser already has this answer (304). */
export const notModified = (ifNoneMatch: string | null | undefined, answer: EncodedAnswer) =>
  answer.httpStatus === 200 && matchesEtag(ifNoneMatch ?? undefined, answer.etag);
