import type { NextRequest } from "next/server";
import { readBodyLimited } from "@/lib/api/read-body";
import { respond } from "@/lib/api/respond";
import { authorizeRequest } from "@/lib/server/access";
import { getServerContext } from "@/lib/server/context";

/** Upload a snapshot bundle (.json.gz or .json as the raw body); answers its id and what it holds. Outside proxy.ts (see its matcher). */
export async function POST(request: NextRequest) {
  return respond(async () => {
    const ctx = getServerContext();
    authorizeRequest(ctx.config.auth, request);
    const bytes = await readBodyLimited(request.body, ctx.snapshots.maxBytes);
    return { data: await ctx.snapshots.put(bytes) };
  });
}
