import type { NextRequest } from "next/server";
import { receiveWebhook } from "@/lib/audit/api";
import { respond } from "@/lib/api/respond";
import { getServerContext } from "@/lib/server/context";

/** The kube-apiserver audit webhook backend posts EventList batches here (see deploy/audit/). */
export async function POST(request: NextRequest) {
  return respond(() => receiveWebhook(getServerContext(), request));
}
