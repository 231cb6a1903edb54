/**
 * One JSON envelope for every Churnscope endpoint, shaped like Prometheus's own so one fetcher
 * handles all of them: data travels with its warnings and infos; errors carry a type and a message.
 */
import { PromError } from "../promql/errors";
import { storeFailureOf } from "../runtime/store-error";

export type ApiSuccess<T> = { status: "success"; data: T; warnings: string[]; infos: string[] };
export type ApiErrorBody = { status: "error"; errorType: string; error: string };
export type ApiEnvelope<T> = ApiSuccess<T> | ApiErrorBody;

/** A failure we answer with a specific HTTP status; anything else is a logged 500. */
export class ApiFailure extends Error {
  constructor(
    readonly httpStatus: number,
    readonly errorType: string,
    message: string,
  ) {
    super(message);
    this.name = "ApiFailure";
  }

  /** A name check rather than instanceof: bundlers may load this module more than once. */
  static is(value: unknown): value is ApiFailure {
    return value instanceof Error && value.name === "ApiFailure" && typeof (value as ApiFailure).httpStatus === "number";
  }
}

export const badRequest = (message: string) => new ApiFailure(400, "bad_data", message);
export const notFound = (message: string) => new ApiFailure(404, "not_found", message);

export function success<T>(data: T, warnings: string[] = [], infos: string[] = []): ApiSuccess<T> {
  return { status: "success", data, warnings, infos };
}

/** Maps any thrown value to an HTTP status and an error body. */
export function failureOf(error: unknown): { httpStatus: number; body: ApiErrorBody } {
  if (ApiFailure.is(error)) {
    return { httpStatus: error.httpStatus, body: { status: "error", errorType: error.errorType, error: error.message } };
  }
  if (PromError.is(error)) {
    const httpStatus = error.failure === "timeout" ? 504 : 502;
    const errorType = error.failure === "upstream" ? `prometheus_${error.errorType ?? "error"}` : error.failure;
    return { httpStatus, body: { status: "error", errorType, error: error.message } };
  }
  const storeFailure = storeFailureOf(error);
  if (storeFailure) return { httpStatus: storeFailure.httpStatus, body: { status: "error", errorType: storeFailure.errorType, error: storeFailure.message } };
  return { httpStatus: 500, body: { status: "error", errorType: "internal", error: "internal error; see the server log" } };
}
