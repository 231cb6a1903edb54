import type { NextRequest } from "next/server";
import { envelopeOf } from "@/lib/api/respond";
import { answerPanel } from "@/lib/server/handlers/panels";
import { cacheHeaders, encodeAnswer, notModified } from "@/lib/server/answer-cache";
import { getServerContext } from "@/lib/server/context";

/** Next's own route (`next dev`; serve.cjs answers panels before Next otherwise): the same answer, headers and ETag. */
export async function GET(request: NextRequest, ctx: { params: Promise<{ id: string }> }) {
  const { id } = await ctx.params;
  const outcome = await envelopeOf(() => answerPanel(getServerContext(), id, Object.fromEntries(request.nextUrl.searchParams), request.signal));
  const encoded = encodeAnswer(outcome.httpStatus, outcome.body);
  const headers = { "Content-Type": "application/json", ...cacheHeaders(encoded), ...outcome.headers };
  if (notModified(request.headers.get("if-none-match"), encoded)) return new Response(null, { status: 304, headers });
  return new Response(new Uint8Array(encoded.plain), { status: encoded.httpStatus, headers });
}
