import type { NextRequest } from "next/server";
import { failureOf } from "@/lib/api/envelope";
import { exportView } from "@/lib/server/handlers/export-view";
import { getServerContext } from "@/lib/server/context";

/** Download the current view (same parameters as the page) as a snapshot bundle. */
export async function GET(request: NextRequest) {
  try {
    const { filename, bytes } = await exportView(getServerContext(), Object.fromEntries(request.nextUrl.searchParams), request.signal);
    return new Response(new Uint8Array(bytes), {
      headers: { "Content-Type": "application/gzip", "Content-Disposition": `attachment; filename="${filename}"`, "Cache-Control": "no-store" },
    });
  } catch (error) {
    const { httpStatus, body } = failureOf(error);
    if (body.errorType === "internal") console.error("churnscope: unexpected error", error);
    return Response.json(body, { status: httpStatus, headers: { "Cache-Control": "no-store" } });
  }
}
