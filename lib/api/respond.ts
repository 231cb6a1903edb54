/** Turns a handler's result or failure into one JSON envelope response. */
import { failureOf, success, type ApiEnvelope } from "./envelope";

type Work<T> = () => Promise<{ data: T; warnings?: string[]; infos?: string[] }>;

/** The envelope and HTTP status for a handler's outcome; an unexpected failure is logged here (a request the client abandoned is not one). */
export async function envelopeOf<T>(work: Work<T>): Promise<{ httpStatus: number; body: ApiEnvelope<T>; headers: Record<string, string> }> {
  try {
    const result = await work();
    return { httpStatus: 200, body: success(result.data, result.warnings, result.infos), headers: {} };
  } catch (error) {
    const { httpStatus, body } = failureOf(error);
    const abandoned = error instanceof Error && error.name === "AbortError";
    if (httpStatus >= 500 && !abandoned && (body.errorType === "internal" || body.errorType.startsWith("store_")))
      console.error("churnscope: unexpected error", error);
    // A refusal for being busy says when to come back.
    const retryAfter = (error as { retryAfterSeconds?: unknown } | null)?.retryAfterSeconds;
    return { httpStatus, body, headers: typeof retryAfter === "number" ? { "Retry-After": String(retryAfter) } : {} };
  }
}

/** For route handlers: the envelope as a web-standard Response. */
export async function respond<T>(work: Work<T>): Promise<Response> {
  const { httpStatus, body, headers } = await envelopeOf(work);
  return Response.json(body, { status: httpStatus, headers: { "Cache-Control": "no-store", ...headers } });
}
