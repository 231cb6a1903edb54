import type { NextRequest } from "next/server";
import { receiveUpload } from "@/lib/server/handlers/audit";
import { respond } from "@/lib/api/respond";
import { authorizeRequest } from "@/lib/server/access";
import { getServerContext } from "@/lib/server/context";

/** An audit log uploaded from the UI, streamed to disk and ingested into the live store (outside proxy.ts: see its matcher). */
export async function POST(request: NextRequest) {
  return respond(() => {
    const ctx = getServerContext();
    authorizeRequest(ctx.config.auth, request);
    return receiveUpload(ctx, request);
  });
}
