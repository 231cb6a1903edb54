import type { NextRequest } from "next/server";
import { respond } from "@/lib/api/respond";
import { answerPanel } from "@/lib/panels/answer";
import { getServerContext } from "@/lib/server/context";

export async function GET(request: NextRequest, ctx: { params: Promise<{ id: string }> }) {
  const { id } = await ctx.params;
  return respond(() => answerPanel(getServerContext(), id, Object.fromEntries(request.nextUrl.searchParams), request.signal));
}
