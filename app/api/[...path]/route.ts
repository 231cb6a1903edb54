/**
 * Next's way to the API pipeline, for `next dev` and `next start` (serve.cjs answers /api/* before
 * Next otherwise): every method of every API path, the same answer. Next compresses it itself.
 */
import { handleApi } from "@/lib/server/api";
import { getServerContext } from "@/lib/server/context";

async function handle(request: Request): Promise<Response> {
  const { status, headers, body } = await handleApi(getServerContext, request, { compress: false });
  // Which way the answer came, in the browser's network panel beside the time it took.
  headers["Server-Timing"] += ', route;desc="through Next"';
  return new Response(body as Uint8Array<ArrayBuffer> | null, { status, headers });
}

export const GET = handle;
export const HEAD = handle;
export const POST = handle;
export const PUT = handle;
export const PATCH = handle;
export const DELETE = handle;
export const OPTIONS = handle;
