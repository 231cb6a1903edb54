/**
 * The browser's fetcher for our JSON API. Errors become ApiClientError with a readable message
 * (including bodies that are not JSON, e.g. from a proxy); warnings never throw, they ride along.
 */
import type { ApiEnvelope, ApiSuccess } from "./envelope";

export class ApiClientError extends Error {
  constructor(
    message: string,
    readonly httpStatus?: number,
    readonly errorType?: string,
    /** when a busy server asked to be tried again (Retry-After) */
    readonly retryAfterSeconds?: number,
  ) {
    super(message);
    this.name = "ApiClientError";
  }
}

export async function fetchEnvelope<T>(url: string, signal?: AbortSignal, init: RequestInit = {}): Promise<ApiSuccess<T>> {
  let response: Response;
  try {
    response = await fetch(url, { ...init, signal, headers: { Accept: "application/json", ...(init.headers as Record<string, string> | undefined) } });
  } catch (error) {
    if (signal?.aborted) throw error;
    throw new ApiClientError("Cannot reach the Churnscope server (network error).");
  }
  const text = await response.text();
  let body: ApiEnvelope<T>;
  try {
    body = JSON.parse(text) as ApiEnvelope<T>;
  } catch {
    throw new ApiClientError(`The server answered HTTP ${response.status} with a body that is not JSON.`, response.status);
  }
  if (body.status === "error") {
    const retryAfter = Number(response.headers.get("retry-after") ?? Number.NaN);
    throw new ApiClientError(body.error, response.status, body.errorType, Number.isFinite(retryAfter) ? retryAfter : undefined);
  }
  if (body.status !== "success") throw new ApiClientError(`Unexpected reply (HTTP ${response.status}).`, response.status);
  return body;
}
