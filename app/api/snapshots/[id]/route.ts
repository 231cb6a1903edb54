import type { NextRequest } from "next/server";
import { respond } from "@/lib/api/respond";
import { info } from "@/lib/snapshot/lookup";
import { getServerContext } from "@/lib/server/context";

export async function GET(_request: NextRequest, ctx: { params: Promise<{ id: string }> }) {
  const { id } = await ctx.params;
  return respond(async () => ({ data: info(await getServerContext().snapshots.open(id), id) }));
}
