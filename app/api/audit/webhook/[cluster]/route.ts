import type { NextRequest } from "next/server";
import { receiveWebhook } from "@/lib/server/handlers/audit";
import { respond } from "@/lib/api/respond";
import { getServerContext } from "@/lib/server/context";

/** The audit webhook with the cluster in the path, as a webhook kubeconfig's server URL names it (deploy/audit/). */
export async function POST(request: NextRequest, { params }: { params: Promise<{ cluster: string }> }) {
  return respond(async () => receiveWebhook(getServerContext(), request, (await params).cluster));
}
