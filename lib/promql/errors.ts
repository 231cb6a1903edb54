/**
 * Why a Prometheus call failed, in terms the dashboard maps to HTTP statuses and panel messages:
 * unreachable (502), timeout (504), upstream error with Prometheus's errorType (502), or a reply
 * that is not the Prometheus API at all, e.g. an HTML page from a proxy (502), or an answer larger
 * than prometheus.maxAnswerMiB (502).
 */
export type PromFailure = "unreachable" | "timeout" | "upstream" | "bad_response" | "too_large";

export class PromError extends Error {
  constructor(
    readonly failure: PromFailure,
    message: string,
    readonly httpStatus?: number,
    readonly errorType?: string,
  ) {
    super(message);
    this.name = "PromError";
  }

  /** A name check rather than instanceof: bundlers may load this module more than once. */
  static is(value: unknown): value is PromError {
    return value instanceof Error && value.name === "PromError" && typeof (value as PromError).failure === "string";
  }
}
