import type { NextRequest } from "next/server";
import { respond } from "@/lib/api/respond";
import { deleteNote } from "@/lib/server/handlers/markers";
import { getServerContext } from "@/lib/server/context";

export async function DELETE(_request: NextRequest, ctx: { params: Promise<{ id: string }> }) {
  const { id } = await ctx.params;
  return respond(async () => deleteNote(getServerContext(), id));
}
