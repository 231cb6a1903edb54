import type { NextRequest } from "next/server";
import { receiveWebhook } from "@/lib/server/handlers/audit";
import { respond } from "@/lib/api/respond";
import { getServerContext } from "@/lib/server/context";

/**
 * The kube-apiserver audit webhook backend posts EventList batches here (deploy/audit/). Outside
 * proxy.ts (see its matcher): the API server cannot sign in, so the route checks audit.webhookToken.
 */
export async function POST(request: NextRequest) {
  return respond(() => receiveWebhook(getServerContext(), request));
}
