import type { NextRequest } from "next/server";
import { respond } from "@/lib/api/respond";
import { listFields } from "@/lib/server/handlers/objects";
import { getServerContext } from "@/lib/server/context";

export async function GET(request: NextRequest) {
  return respond(async () => listFields(getServerContext(), Object.fromEntries(request.nextUrl.searchParams)));
}
