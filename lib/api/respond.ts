/** Turns a handler's result or failure into one JSON envelope response (web-standard Response). */
import { failureOf, success } from "./envelope";

export async function respond<T>(work: () => Promise<{ data: T; warnings?: string[]; infos?: string[] }>): Promise<Response> {
  try {
    const result = await work();
    return Response.json(success(result.data, result.warnings, result.infos), { headers: { "Cache-Control": "no-store" } });
  } catch (error) {
    const { httpStatus, body } = failureOf(error);
    if (httpStatus >= 500 && (body.errorType === "internal" || body.errorType.startsWith("store_"))) console.error("churnscope: unexpected error", error);
    return Response.json(body, { status: httpStatus, headers: { "Cache-Control": "no-store" } });
  }
}
