import type { NextRequest } from "next/server";
import { respond } from "@/lib/api/respond";
import { keyFromSegments, objectWrites } from "@/lib/server/handlers/objects";
import { getServerContext } from "@/lib/server/context";

export async function GET(request: NextRequest, ctx: { params: Promise<{ key: string[] }> }) {
  const { key } = await ctx.params;
  return respond(async () => objectWrites(getServerContext(), keyFromSegments(key), Object.fromEntries(request.nextUrl.searchParams)));
}
