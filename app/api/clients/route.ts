import type { NextRequest } from "next/server";
import { clientsAnswer } from "@/lib/server/handlers/clients";
import { respond } from "@/lib/api/respond";
import { getServerContext } from "@/lib/server/context";

/** Write requests by client from the ingested audit logs: over time, per resource, per object, before/after. */
export async function GET(request: NextRequest) {
  return respond(async () => clientsAnswer(getServerContext(), Object.fromEntries(request.nextUrl.searchParams)));
}
